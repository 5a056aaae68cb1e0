package kubeconfig_test

import (
	"bytes"
	"os"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"mcr.dev/core/envtest"
)

// TestDocumentedRBACIsEnough runs the provider with a host identity that has exactly the rules of
// config/rbac.yaml (the manifest README.md points to) and nothing else.
func TestDocumentedRBACIsEnough(t *testing.T) {
	manifest, err := os.ReadFile("config/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var rules []rbacv1.PolicyRule
	for _, doc := range bytes.Split(manifest, []byte("\n---\n")) {
		var role rbacv1.Role
		if err := yaml.Unmarshal(doc, &role); err != nil {
			t.Fatal(err)
		}
		if role.Kind == "Role" {
			rules = role.Rules
		}
	}
	if len(rules) == 0 {
		t.Fatal("no Role in config/rbac.yaml")
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
