package clusterapi_test

import (
	"os"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"mcr.dev/core/envtest"
	"mcr.dev/providers/clusterapi"
)

// manifestRules returns the rules of the ClusterRole in config/rbac.yaml.
func manifestRules(t *testing.T) []rbacv1.PolicyRule {
	t.Helper()
	data, err := os.ReadFile("config/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var role rbacv1.ClusterRole
		if err := yaml.UnmarshalStrict([]byte(doc), &role); err != nil {
			t.Fatalf("config/rbac.yaml: %v", err)
		}
		if role.Kind == "ClusterRole" {
			return role.Rules
		}
	}
	t.Fatal("config/rbac.yaml has no ClusterRole")
	return nil
}

// TestRBACManifest runs the provider as a ServiceAccount that has exactly the permissions of
// config/rbac.yaml on the management cluster: it must engage a Cluster and record its Events.
func TestRBACManifest(t *testing.T) {
	ns := namespace(t)
	data, err := fleet.Member("mgmt").ServiceAccountKubeconfig(t.Context(), envtest.ServiceAccountOptions{
		Name:         "clusterapi-provider",
		ClusterRules: manifestRules(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	logs := &logBuffer{}
	p, err := clusterapi.New(cfg, clusterapi.Options{Namespaces: []string{ns}, Log: logs.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	s := runProvider(t, p, logs)
	c := readyCluster(t, ns, "rbac", "east")
	s.waitEngaged(t, c.clusterName())
	waitEvent(t, c, clusterapi.ReasonClusterEngaged)
}

// TestREADMEShowsManifest keeps the RBAC manifest in README.md identical to config/rbac.yaml.
func TestREADMEShowsManifest(t *testing.T) {
	manifest, err := os.ReadFile("config/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "```yaml\n"+string(manifest)+"```") {
		t.Error("README.md does not show config/rbac.yaml verbatim in a yaml block; copy it over")
	}
}
