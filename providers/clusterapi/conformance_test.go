// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterapi_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"mcr.dev/conformance"
	"mcr.dev/conformance/mcrproviders"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/clusterapi"
)

// conformanceNamespace holds the Cluster objects of the conformance members.
const conformanceNamespace = "conformance"

// capiHarness is the KubeconfigHarness of the Cluster API provider plus readiness: each member is
// a Cluster object with its "<name>-kubeconfig" Secret, and SetReady flips the Cluster's
// status.initialization.controlPlaneInitialized as Cluster API does.
type capiHarness struct {
	*conformance.KubeconfigHarness
}

var _ conformance.ReadinessToggler = capiHarness{}

func (capiHarness) SetReady(ctx context.Context, m conformance.Member, ready bool) error {
	return setInitializedFor(ctx, client.ObjectKey{Namespace: conformanceNamespace, Name: m.ID}, ready)
}

func setInitializedFor(ctx context.Context, key client.ObjectKey, ready bool) error {
	obj := &clusterv1.Cluster{}
	if err := mgmt.Get(ctx, key, obj); err != nil {
		return err
	}
	obj.Status.Initialization.ControlPlaneInitialized = ptr.To(ready)
	return mgmt.Status().Update(ctx, obj)
}

// TestConformance runs the mcr conformance suite against the provider with its default options
// (v1beta2, hardened kubeconfig policy), restricted to one namespace of the management cluster.
// Every member's credentials are a ServiceAccount token of its own, which the suite rotates by
// rewriting the kubeconfig Secret, and revokes.
func TestConformance(t *testing.T) { runConformance(t, false) }

// TestConformanceInPlace runs the suite's rotation tests with kit.Options.RefreshCredentialsInPlace
// on (the default; TestConformance turns it off to cover a new engagement per rotation),
// claiming InPlaceCredentialRefresh: a kubeconfig Secret rewritten with a new token keeps the
// engagement.
func TestConformanceInPlace(t *testing.T) { runConformance(t, true) }

func runConformance(t *testing.T, inPlace bool) {
	err := mgmt.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: conformanceNamespace}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	// The provider's log lines and Events (on Clusters and Secrets), which must never quote a
	// member's credentials.
	providerLogs := &providertest.LogBuffer{}
	// The provider reaches the management cluster through a forwarder, which SourceOutage takes
	// down and up again: to the provider, the management cluster's apiserver restarts. The
	// shared apiserver itself keeps serving the package's other tests.
	mgmtConfig, mgmtLink := mcrproviders.LinkHost(t, fleet.Member("mgmt"))
	harness := capiHarness{&conformance.KubeconfigHarness{
		Fleet: conformance.NewFleet(fleet.Member("east"), fleet.Member("west"), fleet.Member("north")),
		Provider: func(context.Context) (multicluster.Provider, error) {
			return clusterapi.New(mgmtConfig, clusterapi.Options{
				Namespaces: []string{conformanceNamespace},
				Options: kit.Options{RetryMaxDelay: time.Second, Logger: providerLogs.Logger(), ResyncPeriod: mcrproviders.Resync,
					RefreshCredentialsInPlace: ptr.To(inPlace)},
			})
		},
		// The Secret first, then the Cluster, then its status: the order of a real control
		// plane provider, which writes the kubeconfig before it reports initialization.
		Write: func(ctx context.Context, name string, kubeconfig []byte) error {
			if err := writeKubeconfigSecret(ctx, conformanceNamespace, name, kubeconfig); err != nil {
				return err
			}
			obj := &clusterv1.Cluster{
				ObjectMeta: metav1.ObjectMeta{Namespace: conformanceNamespace, Name: name},
				Spec: clusterv1.ClusterSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{
					APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "DockerCluster", Name: name,
				}},
			}
			err := mgmt.Create(ctx, obj)
			if apierrors.IsAlreadyExists(err) {
				return nil // a rotation: only the Secret changes
			}
			if err != nil {
				return err
			}
			return setInitializedFor(ctx, client.ObjectKeyFromObject(obj), true)
		},
		Delete: func(ctx context.Context, name string) error {
			key := metav1.ObjectMeta{Namespace: conformanceNamespace, Name: name}
			if err := client.IgnoreNotFound(mgmt.Delete(ctx, &clusterv1.Cluster{ObjectMeta: key})); err != nil {
				return err
			}
			key.Name = clusterapi.KubeconfigSecretName(name)
			return client.IgnoreNotFound(mgmt.Delete(ctx, &corev1.Secret{ObjectMeta: key}))
		},
		ProviderReports: mcrproviders.Reports(providerLogs.Lines, mgmt, conformanceNamespace),
		SourceOutage:    mcrproviders.Outage(mgmtLink),
		Resync:          mcrproviders.Resync,
		// A change that is not a change of the member: a label on the Cluster and an annotation
		// on its Secret.
		Update: func(ctx context.Context, name string) error {
			stamp := time.Now().Format("150405.000000")
			obj := &clusterv1.Cluster{}
			if err := mgmt.Get(ctx, client.ObjectKey{Namespace: conformanceNamespace, Name: name}, obj); err != nil {
				return err
			}
			obj.Labels = map[string]string{"conformance.mcr.dev/touched": stamp}
			if err := mgmt.Update(ctx, obj); err != nil {
				return err
			}
			s := &corev1.Secret{}
			if err := mgmt.Get(ctx, client.ObjectKey{Namespace: conformanceNamespace, Name: clusterapi.KubeconfigSecretName(name)}, s); err != nil {
				return err
			}
			s.Annotations = map[string]string{"conformance.mcr.dev/touched": stamp}
			return mgmt.Update(ctx, s)
		},
		ClusterName: func(name string) multicluster.ClusterName {
			return clusterapi.ClusterName(conformanceNamespace, name)
		},
	}}

	if inPlace {
		mcrproviders.RunInPlace(t, harness, mcrproviders.Options("clusterapi"))
		return
	}
	conformance.Run(t, harness, mcrproviders.Options("clusterapi"))
}
