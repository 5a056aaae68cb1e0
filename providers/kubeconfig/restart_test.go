// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kubeconfig_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/kubeconfig"
)

// TestHostRestart stops the host apiserver while members are engaged, for longer than the
// provider's CacheSyncTimeout, and starts it again (providertest.RunRestartTest).
func TestHostRestart(t *testing.T) {
	providertest.RunRestartTest(t, providertest.RestartTest{Wait: waitTimeout, Subjects: restartSecrets})
}

// restartSecrets are labeled kubeconfig Secrets of the restart fleet's namespace, each reaching
// its member with admin credentials.
func restartSecrets(_ *testing.T, f providertest.RestartFleet) []providertest.RestartSubject {
	return []providertest.RestartSubject{{
		New: func(o kit.Options) (providertest.Provider, error) {
			opts := testOptions(f.Namespace)
			opts.CacheSyncTimeout = o.CacheSyncTimeout
			return kubeconfig.New(f.Host.Config(), opts)
		},
		Add: func(ctx context.Context, name string) (multicluster.ClusterName, error) {
			return multicluster.ClusterName(name), f.Client.Create(ctx, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.Namespace, Labels: map[string]string{kubeconfig.DefaultSecretLabel: "true"}},
				Data:       map[string][]byte{kubeconfig.DefaultSecretKey: f.Member.Kubeconfig()},
			})
		},
		Remove: f.Delete(&corev1.Secret{}),
	}}
}
