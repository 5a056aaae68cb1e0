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
	"runtime/debug"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"mcr.dev/core/envtest"
	"mcr.dev/examples/internal/exampletest"
	"mcr.dev/providers/clusterapi"
)

var fleet *envtest.Fleet

func TestMain(m *testing.M) { os.Exit(exampletest.Main(m, &fleet, "mgmt", "east", "west")) }

// The example engages the ready Clusters of the management cluster that match the selector,
// also one provisioned while it runs, under <namespace>/<name>.
func TestClusterAPIProviderExample(t *testing.T) {
	mgmt := managementClient(t)
	east := exampletest.Client(t, fleet.Member("east").Config())
	west := exampletest.Client(t, fleet.Member("west").Config())
	exampletest.SeedMarked(t, east, "demo", "hello")
	exampletest.SeedMarked(t, west, "demo", "hello")
	if err := mgmt.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}); err != nil {
		t.Fatal(err)
	}
	provision(t, mgmt, "team-a", "east")

	kubeconfig := exampletest.WriteKubeconfig(t, t.TempDir(), "mgmt.kubeconfig", fleet.Member("mgmt"))
	p := exampletest.Start(t, func(ctx context.Context) error {
		return run(ctx, []string{
			"-kubeconfig", kubeconfig, "-selector", "env=prod", "-infrastructure-kinds", "DockerCluster",
			"-metrics-bind-address", "0", "-health-probe-bind-address", "0", "-zap-log-level", "error",
		})
	})
	p.Eventually(t, "team-a/east marked", exampletest.MarkedBy(east, "demo", "hello", "team-a/east"))

	provision(t, mgmt, "team-a", "west")
	p.Eventually(t, "team-a/west marked", exampletest.MarkedBy(west, "demo", "hello", "team-a/west"))
	p.Stop(t)
}

// provision does what Cluster API does when it has provisioned a workload cluster (here: the
// fleet member of the same name): it writes the kubeconfig Secret, creates the Cluster and marks
// its control plane initialized.
func provision(t *testing.T, mgmt client.Client, namespace, name string) {
	t.Helper()
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace, Name: clusterapi.KubeconfigSecretName(name),
			Labels: map[string]string{clusterapi.ClusterNameLabel: name},
		},
		Type: clusterv1.ClusterSecretType,
		Data: map[string][]byte{clusterapi.KubeconfigDataKey: fleet.Member(name).Kubeconfig()},
	}
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{"env": "prod"}},
		Spec: clusterv1.ClusterSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{
			APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "DockerCluster", Name: name,
		}},
	}
	for _, obj := range []client.Object{secret, cluster} {
		if err := mgmt.Create(t.Context(), obj); err != nil {
			t.Fatalf("creating %T %s/%s: %v", obj, namespace, name, err)
		}
	}
	cluster.Status.Initialization.ControlPlaneInitialized = ptr.To(true)
	if err := mgmt.Status().Update(t.Context(), cluster); err != nil {
		t.Fatalf("marking Cluster %s/%s initialized: %v", namespace, name, err)
	}
}

// managementClient installs Cluster API's Cluster CRD on the mgmt member, once, and returns a
// client for it that knows the Cluster API types.
func managementClient(t *testing.T) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := clusterv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(fleet.Member("mgmt").Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	exampletest.InstallCRD(t, c, clusterCRD(t))
	return c
}

// clusterCRD reads the Cluster CRD from the cluster-api module of the version of the API types
// linked into this binary, from the module cache (downloading it through the module proxy if
// needed), as the provider's own tests do. Only v1beta2 is used here, so the conversion webhook
// Cluster API serves between versions is replaced by no conversion.
func clusterCRD(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	version := "v1.14.2"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range bi.Deps {
			if dep.Path == "sigs.k8s.io/cluster-api/api" {
				version = dep.Version
			}
		}
	}
	const file = "core/config/crd/bases/cluster.x-k8s.io_clusters.yaml"
	out, err := exec.CommandContext(t.Context(), "go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOMODCACHE: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "sigs.k8s.io/cluster-api@"+version)
	if _, err := os.Stat(filepath.Join(dir, file)); err != nil {
		cmd := exec.CommandContext(t.Context(), "go", "mod", "download", "-json", "sigs.k8s.io/cluster-api@"+version)
		cmd.Dir = os.TempDir()
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		out, err := cmd.Output()
		var info struct{ Dir string }
		if err == nil {
			err = json.Unmarshal(out, &info)
		}
		if err != nil {
			t.Fatalf("downloading sigs.k8s.io/cluster-api@%s for its CRDs: %v", version, err)
		}
		dir = info.Dir
	}
	data, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crd); err != nil {
		t.Fatal(fmt.Errorf("decoding %s: %w", file, err))
	}
	crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
	return crd
}
