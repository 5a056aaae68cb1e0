// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterapi_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/clusterapi"
)

// TestHostRestart stops the management cluster's apiserver while Clusters are engaged, for
// longer than the provider's CacheSyncTimeout, and starts it again (providertest.RunRestartTest).
// It has a fleet of its own, since a host outage would disturb every other test of the package.
func TestHostRestart(t *testing.T) {
	t.Parallel()
	f := envtest.StartForTest(t, "host", "member")
	host := f.Member("host")
	if err := installCRD(t.Context(), host.Config()); err != nil {
		t.Fatal(err)
	}
	c := host.ClientForTest(t, client.Options{Scheme: scheme})
	ns := envtest.NamespaceForTest(t, "fleet", host)
	p, err := clusterapi.New(host.Config(), clusterapi.Options{Namespaces: []string{ns}, Options: providertest.RestartKitOptions()})
	if err != nil {
		t.Fatal(err)
	}
	providertest.RunRestartTest(t, providertest.RestartTest{
		Host: host, Wait: waitTimeout,
		Subjects: []providertest.RestartSubject{{
			Provider: p,
			Add: func(ctx context.Context, name string) (multicluster.ClusterName, error) {
				return clusterapi.ClusterName(ns, name), createReadyCluster(ctx, c, ns, name, f.Member("member").Kubeconfig())
			},
			Remove: func(ctx context.Context, name string) error {
				return c.Delete(ctx, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
			},
		}},
		MemberWorks: func(ctx context.Context, member cluster.Cluster) error {
			return member.GetAPIReader().List(ctx, &corev1.ConfigMapList{})
		},
	})
}

// createReadyCluster creates, through c, the kubeconfig Secret and a ready (control plane
// initialized) v1beta2 Cluster ns/name.
func createReadyCluster(ctx context.Context, c client.Client, ns, name string, kubeconfig []byte) error {
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: clusterapi.KubeconfigSecretName(name),
			Labels: map[string]string{clusterapi.ClusterNameLabel: name},
		},
		Type: clusterv1.ClusterSecretType,
		Data: map[string][]byte{clusterapi.KubeconfigDataKey: kubeconfig},
	}
	if err := c.Create(ctx, secret); err != nil {
		return fmt.Errorf("creating the kubeconfig Secret of %s: %w", name, err)
	}
	obj := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: clusterv1.ClusterSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{
			APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "DockerCluster", Name: name,
		}},
	}
	if err := c.Create(ctx, obj); err != nil {
		return fmt.Errorf("creating Cluster %s: %w", name, err)
	}
	obj.Status.Initialization.ControlPlaneInitialized = ptr.To(true)
	if err := c.Status().Update(ctx, obj); err != nil {
		return fmt.Errorf("setting Cluster %s initialized: %w", name, err)
	}
	return nil
}
