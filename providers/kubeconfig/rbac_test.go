package kubeconfig_test

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"mcr.dev/core/envtest"
	"mcr.dev/core/providers/providertest"
)

// TestDocumentedRBACIsEnough runs the provider with a host identity that has exactly the rules of
// config/rbac.yaml (the manifest README.md points to) and nothing else.
func TestDocumentedRBACIsEnough(t *testing.T) {
	rules, err := providertest.ManifestRules("config/rbac.yaml", "Role")
	if err != nil {
		t.Fatal(err)
	}

	ns := newNamespace(t)
	hostKubeconfig, err := fleet.Member("hub").ServiceAccountKubeconfig(t.Context(), envtest.ServiceAccountOptions{
		Namespace:    ns,
		Name:         "provider",
		Rules:        rules,
		ClusterRules: []rbacv1.PolicyRule{},
	})
	if err != nil {
		t.Fatal(err)
	}
	hostConfig := restConfig(t, hostKubeconfig)

	p, err := newProviderFor(hostConfig, testOptions(ns))
	if err != nil {
		t.Fatal(err)
	}
	aware := newRecordingAware()
	startProvider(t, p, aware)
	putSecret(t, ns, "m1", fleet.Member("m1").Kubeconfig())
	if err := canListNamespaces(t.Context(), aware.waitEngaged(t, "m1", 1)); err != nil {
		t.Fatal(err)
	}
	// Events are written with the same identity.
	waitEvent(t, ns, "m1", "ClusterEngaged")
}
