package kubeconfig_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"mcr.dev/conformance"
	"mcr.dev/core/multicluster"
	"mcr.dev/providers/kubeconfig"
)

// TestConformance runs the mcr conformance suite against the provider: members are kubeconfig
// Secrets in one namespace of the hub, each pointing at a fleet apiserver with a ServiceAccount
// token of its own, which the suite rotates and revokes.
func TestConformance(t *testing.T) {
	ns := newNamespace(t)
	secrets := hub.CoreV1().Secrets(ns)

	write := func(ctx context.Context, name string, data []byte) error {
		s, err := secrets.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			_, err = secrets.Create(ctx, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{kubeconfig.DefaultSecretLabel: "true"}},
				Data:       map[string][]byte{kubeconfig.DefaultSecretKey: data},
			}, metav1.CreateOptions{})
			return err
		}
		if err != nil {
			return err
		}
		s.Data = map[string][]byte{kubeconfig.DefaultSecretKey: data}
		_, err = secrets.Update(ctx, s, metav1.UpdateOptions{})
		return err
	}

	harness := &conformance.KubeconfigHarness{
		Fleet: conformance.NewFleet(fleet.Member("m1"), fleet.Member("m2"), fleet.Member("m3")),
		Provider: func(context.Context) (multicluster.Provider, error) {
			opts := testOptions(ns)
			opts.RetryMaxDelay = time.Second
			return kubeconfig.New(fleet.Member("hub").Config(), opts)
		},
		Write: write,
		Delete: func(ctx context.Context, name string) error {
			err := secrets.Delete(ctx, name, metav1.DeleteOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		},
		// A metadata-only change: an annotation.
		Update: func(ctx context.Context, name string) error {
			s, err := secrets.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if s.Annotations == nil {
				s.Annotations = map[string]string{}
			}
			s.Annotations["conformance.mcr.dev/touched"] = time.Now().Format(time.RFC3339Nano)
			_, err = secrets.Update(ctx, s, metav1.UpdateOptions{})
			return err
		},
	}

	conformance.Run(t, harness, conformance.Options{
		Features: []conformance.Feature{
			conformance.CredentialRotation,
			conformance.EngageErrorRecovery,
			conformance.Scale,
			conformance.UnresponsiveMembers,
		},
		Implementation: conformance.Implementation{
			Organization: "mcr",
			Project:      "mcr.dev/providers/kubeconfig",
		},
	})
}
