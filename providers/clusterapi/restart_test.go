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

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/clusterapi"
)

// TestHostRestart stops the management cluster's apiserver while Clusters are engaged, for
// longer than the provider's CacheSyncTimeout, and starts it again (providertest.RunRestartTest).
func TestHostRestart(t *testing.T) {
	providertest.RunRestartTest(t, providertest.RestartTest{Scheme: scheme, Install: installCRD, Wait: waitTimeout, Subjects: restartClusters})
}

// restartClusters are ready Clusters of the restart fleet's namespace, reaching its member.
func restartClusters(_ *testing.T, f providertest.RestartFleet) []providertest.RestartSubject {
	return []providertest.RestartSubject{{
		New: func(o kit.Options) (providertest.Provider, error) {
			return clusterapi.New(f.Host.Config(), clusterapi.Options{Namespaces: []string{f.Namespace}, Options: o})
		},
		Add: func(ctx context.Context, name string) (multicluster.ClusterName, error) {
			err := createReadyCluster(ctx, f.Client, f.Namespace, name, f.Member.Kubeconfig())
			return clusterapi.ClusterName(f.Namespace, name), err
		},
		Remove: f.Delete(&clusterv1.Cluster{}),
	}}
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
