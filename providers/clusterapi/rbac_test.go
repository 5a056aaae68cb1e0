package clusterapi_test

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/tools/clientcmd"

	"mcr.dev/core/envtest"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/clusterapi"
)

// TestRBACManifest runs the provider as a ServiceAccount that has exactly the permissions of
// config/rbac.yaml on the management cluster: it must engage a Cluster and record its Events.
// The manifest is quoted in docs/providers/clusterapi.md only, and `make verify-docs` keeps that
// quote identical to the file.
func TestRBACManifest(t *testing.T) {
	ns := namespace(t)
	data, err := fleet.Member("mgmt").ServiceAccountKubeconfig(t.Context(), envtest.ServiceAccountOptions{
		Name:         "clusterapi-provider",
		ClusterRules: mustManifestRules(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	logs := &logBuffer{}
	p, err := clusterapi.New(cfg, clusterapi.Options{Namespaces: []string{ns}, Options: kit.Options{Logger: logs.Logger()}})
	if err != nil {
		t.Fatal(err)
	}
	s := runProvider(t, p, logs)
	c := readyCluster(t, ns, "rbac", "east")
	s.waitEngaged(t, c.clusterName())
	waitEvent(t, c, kit.ReasonClusterEngaged)
}

// mustManifestRules returns the rules of the ClusterRole in config/rbac.yaml.
func mustManifestRules(t *testing.T) []rbacv1.PolicyRule {
	t.Helper()
	rules, err := providertest.ManifestRules("config/rbac.yaml", "ClusterRole")
	if err != nil {
		t.Fatal(err)
	}
	return rules
}
