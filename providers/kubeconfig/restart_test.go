// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kubeconfig_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/kubeconfig"
)

// TestHostRestart stops the host apiserver while members are engaged, for longer than the
// provider's CacheSyncTimeout, and starts it again (providertest.RunRestartTest). It has a fleet
// of its own, since a host outage would disturb every other test of the package.
func TestHostRestart(t *testing.T) {
	t.Parallel()
	f := envtest.StartForTest(t, "host", "member")
	host := f.Member("host")
	client := kubernetes.NewForConfigOrDie(host.Config())
	ns := envtest.NamespaceForTest(t, "mcr-system", host)
	opts := testOptions(ns)
	opts.CacheSyncTimeout = providertest.RestartCacheSyncTimeout
	p, err := kubeconfig.New(host.Config(), opts)
	if err != nil {
		t.Fatal(err)
	}
	providertest.RunRestartTest(t, providertest.RestartTest{
		Host: host, Wait: waitTimeout,
		Subjects: []providertest.RestartSubject{{
			Provider: p,
			Add: func(ctx context.Context, name string) (multicluster.ClusterName, error) {
				s := &corev1.Secret{
					ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{kubeconfig.DefaultSecretLabel: "true"}},
					Data:       map[string][]byte{kubeconfig.DefaultSecretKey: f.Member("member").Kubeconfig()},
				}
				_, err := client.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{})
				return multicluster.ClusterName(name), err
			},
			Remove: func(ctx context.Context, name string) error {
				return client.CoreV1().Secrets(ns).Delete(ctx, name, metav1.DeleteOptions{})
			},
		}},
		MemberWorks: func(ctx context.Context, member cluster.Cluster) error {
			return member.GetClient().List(ctx, &corev1.NamespaceList{})
		},
	})
}
