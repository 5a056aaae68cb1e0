// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterprofile_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/clusterprofile"
)

// TestHostRestart stops the hub's apiserver while profiles are engaged, for longer than the
// provider's CacheSyncTimeout, and starts it again (providertest.RunRestartTest). It runs on a
// fleet of its own, so that the outage disturbs no other test.
func TestHostRestart(t *testing.T) {
	t.Parallel()
	f := envtest.StartForTest(t, "hub", "member")
	hubMember := f.Member("hub")
	if err := installCRD(t.Context(), hubMember.Config()); err != nil {
		t.Fatal(err)
	}
	c := hubMember.ClientForTest(t, client.Options{Scheme: scheme})
	ns := envtest.NamespaceForTest(t, "fleet", hubMember)
	// add creates a healthy profile whose kubeconfig Secret reaches the member.
	add := func(ctx context.Context, name string) error {
		data, err := f.Member("member").ServiceAccountKubeconfig(ctx, envtest.ServiceAccountOptions{Name: name})
		if err != nil {
			return err
		}
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-kubeconfig", Labels: map[string]string{
				clusterprofile.SecretLabelConsumer: consumer, clusterprofile.SecretLabelProfile: name,
			}},
			Data: map[string][]byte{clusterprofile.SecretDataKey: data},
		}
		if err := c.Create(ctx, secret); err != nil {
			return err
		}
		cp := &v1alpha1.ClusterProfile{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec:       v1alpha1.ClusterProfileSpec{ClusterManager: v1alpha1.ClusterManager{Name: "test-manager"}},
		}
		if err := c.Create(ctx, cp); err != nil {
			return err
		}
		cp.Status = healthyStatus()
		return c.Status().Update(ctx, cp)
	}
	p, err := clusterprofile.New(hubMember.Config(), clusterprofile.Options{
		Secret:  &clusterprofile.SecretStrategy{ConsumerName: consumer},
		Options: providertest.RestartKitOptions(),
	})
	if err != nil {
		t.Fatal(err)
	}
	providertest.RunRestartTest(t, providertest.RestartTest{
		Host: hubMember, Wait: waitTimeout,
		Subjects: []providertest.RestartSubject{{
			Provider: p,
			Add: func(ctx context.Context, name string) (multicluster.ClusterName, error) {
				return clusterprofile.ClusterName(ns, name), add(ctx, name)
			},
			Remove: func(ctx context.Context, name string) error {
				return c.Delete(ctx, &v1alpha1.ClusterProfile{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
			},
		}},
	})
}
