// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kubeconfig_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/conformance"
	"mcr.dev/conformance/mcrproviders"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/kubeconfig"
)

// TestConformance runs the mcr conformance suite against the provider: members are kubeconfig
// Secrets in one namespace of the hub, each pointing at a fleet apiserver with a ServiceAccount
// token of its own, which the suite rotates and revokes.
func TestConformance(t *testing.T) { runConformance(t, false) }

// TestConformanceInPlace runs the suite's rotation tests with kit.Options.RefreshCredentialsInPlace
// on (the default; TestConformance turns it off to cover a new engagement per rotation),
// claiming InPlaceCredentialRefresh: a Secret rewritten with a new token keeps the engagement.
func TestConformanceInPlace(t *testing.T) { runConformance(t, true) }

func runConformance(t *testing.T, inPlace bool) {
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

	// The provider's log lines and Events (on the Secrets), which must never quote a member's
	// credentials.
	providerLogs := &providertest.LogBuffer{}
	events, err := client.New(fleet.Member("hub").Config(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}

	// The provider reaches the hub through a forwarder, which SourceOutage takes down and up
	// again: to the provider, the hub's apiserver restarts. The shared hub itself keeps serving
	// the package's other tests.
	hubConfig, hubLink := mcrproviders.LinkHost(t, fleet.Member("hub"))

	harness := &conformance.KubeconfigHarness{
		Fleet: conformance.NewFleet(fleet.Member("m1"), fleet.Member("m2"), fleet.Member("m3")),
		Provider: func(context.Context) (multicluster.Provider, error) {
			opts := testOptions(ns)
			opts.RetryMaxDelay = time.Second
			opts.ResyncPeriod = mcrproviders.Resync
			opts.Logger = providerLogs.Logger().WithName("provider")
			opts.RefreshCredentialsInPlace = ptr.To(inPlace)
			return kubeconfig.New(hubConfig, opts)
		},
		Write: write,
		Delete: func(ctx context.Context, name string) error {
			err := secrets.Delete(ctx, name, metav1.DeleteOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		},
		ProviderReports: mcrproviders.Reports(providerLogs.Lines, events, ns),
		SourceOutage:    mcrproviders.Outage(hubLink),
		Resync:          mcrproviders.Resync,
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

	// Not MemberReadiness: a kubeconfig Secret carries no readiness.
	o := mcrproviders.Options("kubeconfig", conformance.MemberReadiness)
	if inPlace {
		mcrproviders.RunInPlace(t, harness, o)
		return
	}
	conformance.Run(t, harness, o)
}
