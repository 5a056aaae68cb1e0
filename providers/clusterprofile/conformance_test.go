// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterprofile_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"mcr.dev/conformance"
	"mcr.dev/conformance/mcrproviders"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/clusterprofile"
)

// conformanceNamespace holds the ClusterProfiles of the conformance members.
const conformanceNamespace = "conformance"

// memberLabel labels the token Secrets of a conformance member, so that Delete finds them all.
const memberLabel = "conformance.mcr.dev/member"

// profileHarness is the KubeconfigHarness of the ClusterProfile provider with access providers,
// plus readiness. Each member is a ClusterProfile whose status.accessProviders lists the
// reference plugin (mcr-token) with the member's server and CA, and a token Secret on the hub
// that the real plugin binary reads through client-go's exec authenticator. A member's
// credentials are its token: writing a new one (a rotation) stores it in a new Secret and points
// the profile's client.authentication.k8s.io/exec extension at it, as a cluster manager would.
// SetReady flips the ControlPlaneHealthy condition.
type profileHarness struct {
	*conformance.KubeconfigHarness
}

var _ conformance.ReadinessToggler = profileHarness{}

func (profileHarness) SetReady(ctx context.Context, m conformance.Member, ready bool) error {
	return updateStatus(ctx, client.ObjectKey{Namespace: conformanceNamespace, Name: m.ID}, func(s *v1alpha1.ClusterProfileStatus) {
		healthy(s, ready)
	})
}

// writeMember stores the token of kubeconfig in a Secret named after the token's hash and
// creates the member's ClusterProfile, or points it at the new Secret.
func writeMember(ctx context.Context, name string, kubeconfig []byte) error {
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		return err
	}
	if cfg.BearerToken == "" {
		return errors.New("the member's kubeconfig has no token")
	}
	sum := sha256.Sum256([]byte(cfg.BearerToken))
	secretName := name + "-" + hex.EncodeToString(sum[:4])
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: tokenNamespace, Name: secretName, Labels: map[string]string{memberLabel: name}},
		Data:       map[string][]byte{"token": []byte(cfg.BearerToken), "server": []byte(cfg.Host)},
	}
	if err := hub.Create(ctx, secret); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	ap := accessFor(cfg.Host, cfg.CAData, map[string]string{"clusterName": name, "secretName": secretName})

	key := client.ObjectKey{Namespace: conformanceNamespace, Name: name}
	if err := hub.Get(ctx, key, &v1alpha1.ClusterProfile{}); apierrors.IsNotFound(err) {
		status := v1alpha1.ClusterProfileStatus{AccessProviders: []v1alpha1.AccessProvider{ap}}
		healthy(&status, true)
		return createProfile(ctx, conformanceNamespace, name, status)
	} else if err != nil {
		return err
	}
	return updateStatus(ctx, key, func(s *v1alpha1.ClusterProfileStatus) { s.AccessProviders = []v1alpha1.AccessProvider{ap} })
}

// TestConformance runs the mcr conformance suite against the provider with access providers
// (the tests' provider file: the real reference plugin), default readiness (ControlPlaneHealthy)
// and a short grace period, restricted to one namespace of the hub.
func TestConformance(t *testing.T) {
	if err := hub.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: conformanceNamespace}}); err != nil {
		t.Fatal(err)
	}
	providers := accessConfig(t, "")
	// The provider's log lines and Events (on the ClusterProfiles), which must never quote a
	// member's credentials.
	providerLogs := &providertest.LogBuffer{}
	// The provider reaches the hub through a forwarder, which SourceOutage takes down and up
	// again: to the provider, the hub's apiserver restarts. The shared hub itself keeps serving
	// the package's other tests and the access plugin, which reads its token Secrets directly.
	hubConfig, hubLink := mcrproviders.LinkHost(t, fleet.Member("hub"))
	harness := profileHarness{&conformance.KubeconfigHarness{
		Fleet: conformance.NewFleet(fleet.Member("east"), fleet.Member("west"), fleet.Member("north")),
		Provider: func(context.Context) (multicluster.Provider, error) {
			return clusterprofile.New(hubConfig, clusterprofile.Options{
				AccessProviders:    providers,
				Namespaces:         []string{conformanceNamespace},
				UnreadyGracePeriod: 200 * time.Millisecond,
				Options:            kit.Options{RetryMaxDelay: time.Second, Logger: providerLogs.Logger(), ResyncPeriod: mcrproviders.Resync},
			})
		},
		Write: writeMember,
		Delete: func(ctx context.Context, name string) error {
			err := hub.Delete(ctx, &v1alpha1.ClusterProfile{ObjectMeta: metav1.ObjectMeta{Namespace: conformanceNamespace, Name: name}})
			if client.IgnoreNotFound(err) != nil {
				return err
			}
			return hub.DeleteAllOf(ctx, &corev1.Secret{}, client.InNamespace(tokenNamespace), client.MatchingLabels{memberLabel: name})
		},
		ProviderReports: mcrproviders.Reports(providerLogs.Lines, hub, conformanceNamespace),
		SourceOutage:    mcrproviders.Outage(hubLink),
		Resync:          mcrproviders.Resync,
		// A change that is not a change of the member: a label, the health condition probed
		// again, and KEP-2149 properties with a new observation time.
		Update: func(ctx context.Context, name string) error {
			stamp := time.Now().Format("150405.000000")
			key := client.ObjectKey{Namespace: conformanceNamespace, Name: name}
			cp := &v1alpha1.ClusterProfile{}
			if err := hub.Get(ctx, key, cp); err != nil {
				return err
			}
			cp.Labels["conformance.mcr.dev/touched"] = stamp
			if err := hub.Update(ctx, cp); err != nil {
				return err
			}
			return updateStatus(ctx, key, func(s *v1alpha1.ClusterProfileStatus) {
				s.Properties = []v1alpha1.Property{
					{Name: clusterprofile.PropertyClusterID, Value: name, LastObservedTime: metav1.Now()},
					{Name: clusterprofile.PropertyClusterSet, Value: "conformance", LastObservedTime: metav1.Now()},
				}
				s.Version.Kubernetes = fmt.Sprintf("1.36.%d", time.Now().Nanosecond()%100)
			})
		},
		ClusterName: func(name string) multicluster.ClusterName {
			return clusterprofile.ClusterName(conformanceNamespace, name)
		},
	}}

	conformance.Run(t, harness, mcrproviders.Options("clusterprofile"))
}
