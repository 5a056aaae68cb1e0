// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterprofile_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/clusterprofile"
)

// TestHostRestart stops the hub's apiserver while profiles are engaged, for longer than the
// provider's CacheSyncTimeout, and starts it again (providertest.RunRestartTest).
func TestHostRestart(t *testing.T) {
	providertest.RunRestartTest(t, providertest.RestartTest{Scheme: scheme, Install: installCRD, Wait: waitTimeout, Subjects: restartProfiles})
}

// restartProfiles are healthy profiles of the restart fleet's namespace (the hub's), each with a
// kubeconfig Secret that reaches the member as a ServiceAccount of its own.
func restartProfiles(_ *testing.T, f providertest.RestartFleet) []providertest.RestartSubject {
	add := func(ctx context.Context, name string) error {
		data, err := f.Member.ServiceAccountKubeconfig(ctx, envtest.ServiceAccountOptions{Name: name})
		if err != nil {
			return err
		}
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: f.Namespace, Name: name + "-kubeconfig", Labels: map[string]string{
				clusterprofile.SecretLabelConsumer: consumer, clusterprofile.SecretLabelProfile: name,
			}},
			Data: map[string][]byte{clusterprofile.SecretDataKey: data},
		}
		if err := f.Client.Create(ctx, secret); err != nil {
			return err
		}
		cp := &v1alpha1.ClusterProfile{
			ObjectMeta: metav1.ObjectMeta{Namespace: f.Namespace, Name: name},
			Spec:       v1alpha1.ClusterProfileSpec{ClusterManager: v1alpha1.ClusterManager{Name: "test-manager"}},
		}
		if err := f.Client.Create(ctx, cp); err != nil {
			return err
		}
		cp.Status = healthyStatus()
		return f.Client.Status().Update(ctx, cp)
	}
	return []providertest.RestartSubject{{
		New: func(o kit.Options) (providertest.Provider, error) {
			return clusterprofile.New(f.Host.Config(), clusterprofile.Options{Secret: &clusterprofile.SecretStrategy{ConsumerName: consumer}, Options: o})
		},
		Add: func(ctx context.Context, name string) (multicluster.ClusterName, error) {
			return clusterprofile.ClusterName(f.Namespace, name), add(ctx, name)
		},
		Remove: f.Delete(&v1alpha1.ClusterProfile{}),
	}}
}
