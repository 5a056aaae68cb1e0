// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kubeconfig_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/kubeconfig"
)

// TestDocumentedRBACIsEnough runs the provider with a host identity that has exactly the rules of
// config/rbac.yaml (the manifest README.md points to) and nothing else: it must engage members,
// which then work, and record their Events (providertest.RunMemberManifestTest).
func TestDocumentedRBACIsEnough(t *testing.T) {
	providertest.RunMemberManifestTest(t, rbacSecrets(t))
}

// TestEachPermissionIsNeeded runs the provider, for every permission of config/rbac.yaml, with
// the manifest's rules less that one permission, on the shared hub and on a host without
// streaming lists, and shows that something it does with all of them fails then
// (providertest.RunMemberPermissionTests).
func TestEachPermissionIsNeeded(t *testing.T) {
	providertest.RunMemberPermissionTests(t, rbacSecrets(t))
}

// rbacSecrets is the permission test of labeled kubeconfig Secrets in the namespace the
// provider's Role is granted in.
func rbacSecrets(t *testing.T) providertest.MemberPermissionTest {
	return providertest.MemberPermissionTest{
		Rules:      providertest.MustManifestRules(t, "config/rbac.yaml", "Role"),
		Namespaced: true,
		Host:       fleet.Member("hub"),
		Members:    [2]*envtest.Member{fleet.Member("m1"), fleet.Member("m2")},
		// The package sends the process-wide loggers to logs, not to providertest.Main's.
		ProcessLogs: &logs.LogBuffer,
		New: func(cfg *rest.Config, ns string, o kit.Options) (multicluster.ProviderRunnable, error) {
			opts := testOptions(ns)
			opts.Options = o
			return newProviderFor(cfg, opts)
		},
		Add: func(ctx context.Context, c client.Client, ns, name string, data []byte) (multicluster.ClusterName, error) {
			return multicluster.ClusterName(name), c.Create(ctx, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{kubeconfig.DefaultSecretLabel: "true"}},
				Data:       map[string][]byte{kubeconfig.DefaultSecretKey: data},
			})
		},
	}
}
