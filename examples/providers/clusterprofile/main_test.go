// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	"sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"mcr.dev/core/envtest"
	"mcr.dev/examples/internal/exampletest"
	"mcr.dev/providers/clusterprofile"
)

var (
	fleet *envtest.Fleet
	// pluginPath is the reference exec plugin, built from the provider's module in TestMain.
	pluginPath string
)

// tokenNamespace holds, on the hub, the member tokens the reference plugin hands out.
const tokenNamespace = "fleet-tokens"

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcr-clusterprofile-example-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pluginPath = filepath.Join(dir, "clusterprofile-token-plugin")
	out, err := exec.Command("go", "build", "-o", pluginPath, "mcr.dev/providers/clusterprofile/cmd/clusterprofile-token-plugin").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building the reference plugin: %v\n%s", err, out)
		os.Exit(1)
	}
	code := exampletest.Main(m, &fleet, "hub", "east", "west")
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// The example engages the healthy ClusterProfiles of the watched namespace that match the
// selector, one of them registered while it runs, under <namespace>/<name>, and reaches each
// member through the reference access provider: an exec plugin that reads the member's token
// from a Secret on the hub.
func TestClusterProfileProviderExample(t *testing.T) {
	hub := hubClient(t)
	east := exampletest.Client(t, fleet.Member("east").Config())
	west := exampletest.Client(t, fleet.Member("west").Config())
	exampletest.SeedMarked(t, east, "demo", "hello")
	exampletest.SeedMarked(t, west, "demo", "hello")
	for _, ns := range []string{"fleet", tokenNamespace} {
		if err := hub.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}

	// The operator's provider file: the reference plugin reads tokens on the hub.
	dir := t.TempDir()
	hubKubeconfig := exampletest.WriteKubeconfig(t, dir, "hub.kubeconfig", fleet.Member("hub"))
	providerFile, err := json.Marshal(map[string]any{"providers": []any{map[string]any{
		"name": "mcr-token",
		"execConfig": map[string]any{
			"apiVersion": "client.authentication.k8s.io/v1", "command": pluginPath,
			"args": []string{"-kubeconfig", hubKubeconfig, "-namespace", tokenNamespace}, "provideClusterInfo": true,
		},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	providerFilePath := filepath.Join(dir, "providers.json")
	if err := os.WriteFile(providerFilePath, providerFile, 0o600); err != nil {
		t.Fatal(err)
	}

	register(t, hub, "east", "fleet", tokenNamespace)
	p := exampletest.Start(t, func(ctx context.Context) error {
		return run(ctx, []string{
			"-kubeconfig", hubKubeconfig, "-clusterprofile-provider-file", providerFilePath,
			"-namespaces", "fleet", "-selector", "x-k8s.io/cluster-manager=example", "-retry-max-delay", "2s",
			"-metrics-bind-address", "0", "-health-probe-bind-address", "0", "-zap-log-level", "error",
		})
	})
	p.Eventually(t, "fleet/east marked", exampletest.MarkedBy(east, "demo", "hello", "fleet/east"))

	register(t, hub, "west", "fleet", tokenNamespace)
	p.Eventually(t, "fleet/west marked", exampletest.MarkedBy(west, "demo", "hello", "fleet/west"))
	p.Stop(t)
}

// register does what a cluster manager does for a member it manages (here: the fleet member of
// that name): it stores a ServiceAccount token of the member in tokens, where the reference
// plugin finds it, bound to the member's server, and registers a healthy ClusterProfile in
// profiles that lists the access provider with the member's server and CA.
func register(t *testing.T, hub client.Client, member, profiles, tokens string) {
	t.Helper()
	m := fleet.Member(member)
	data, err := m.ServiceAccountKubeconfig(t.Context(), envtest.ServiceAccountOptions{
		Name: "example-controller",
		// What the marker needs on a member, and nothing else.
		ClusterRules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch", "patch"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	token := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: tokens, Name: member},
		Data:       map[string][]byte{"token": []byte(cfg.BearerToken), "server": []byte(m.Host())},
	}
	if err := hub.Create(t.Context(), token); err != nil {
		t.Fatal(err)
	}

	execConfig, err := json.Marshal(map[string]string{"clusterName": member})
	if err != nil {
		t.Fatal(err)
	}
	cp := &v1alpha1.ClusterProfile{
		ObjectMeta: metav1.ObjectMeta{Namespace: profiles, Name: member, Labels: map[string]string{v1alpha1.LabelClusterManagerKey: "example"}},
		Spec:       v1alpha1.ClusterProfileSpec{DisplayName: member, ClusterManager: v1alpha1.ClusterManager{Name: "example"}},
	}
	if err := hub.Create(t.Context(), cp); err != nil {
		t.Fatal(err)
	}
	cp.Status = v1alpha1.ClusterProfileStatus{
		Conditions: []metav1.Condition{{
			Type: v1alpha1.ClusterConditionControlPlaneHealthy, Status: metav1.ConditionTrue,
			Reason: "Healthy", Message: "set by the test", LastTransitionTime: metav1.Now(),
		}},
		AccessProviders: []v1alpha1.AccessProvider{{
			Name: "mcr-token",
			Cluster: clientcmdv1.Cluster{
				Server: m.Host(), CertificateAuthorityData: m.Config().CAData,
				Extensions: []clientcmdv1.NamedExtension{{Name: clusterprofile.ExecExtension, Extension: runtime.RawExtension{Raw: execConfig}}},
			},
		}},
	}
	if err := hub.Status().Update(t.Context(), cp); err != nil {
		t.Fatalf("setting the status of ClusterProfile %s/%s: %v", profiles, member, err)
	}
}

// hubClient installs the ClusterProfile CRD shipped with sigs.k8s.io/cluster-inventory-api (the
// version the provider is built with) on the hub and returns a client that knows the type.
func hubClient(t *testing.T) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	sb := runtime.NewSchemeBuilder(clientgoscheme.AddToScheme, v1alpha1.AddToScheme, apiextensionsv1.AddToScheme)
	if err := sb.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(fleet.Member("hub").Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), "go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/cluster-inventory-api").Output()
	if err != nil {
		t.Fatalf("locating sigs.k8s.io/cluster-inventory-api: %v", err)
	}
	file := filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "bases", "multicluster.x-k8s.io_clusterprofiles.yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crd); err != nil {
		t.Fatal(fmt.Errorf("decoding %s: %w", file, err))
	}
	exampletest.InstallCRD(t, c, crd)
	return c
}
