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

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"mcr.dev/core/envtest"
	"mcr.dev/examples/internal/exampletest"
	"mcr.dev/providers/gardener"
)

var fleet *envtest.Fleet

func TestMain(m *testing.M) { os.Exit(exampletest.Main(m, &fleet, "seed", "east", "west")) }

// The example, in the seed topology, engages the shoot control planes the seed hosts whose
// Shoot is in the watched project and matches the selector, one of them created while it runs,
// under the shoot's technical ID, with the kubeconfig of the Secret "gardener".
func TestGardenerProviderExample(t *testing.T) {
	seed := seedClient(t)
	east := exampletest.Client(t, fleet.Member("east").Config())
	west := exampletest.Client(t, fleet.Member("west").Config())
	exampletest.SeedMarked(t, east, "demo", "hello")
	exampletest.SeedMarked(t, west, "demo", "hello")
	hostShootControlPlane(t, seed, "dev", "east")

	kubeconfig := exampletest.WriteKubeconfig(t, t.TempDir(), "seed.kubeconfig", fleet.Member("seed"))
	p := exampletest.Start(t, func(ctx context.Context) error {
		return run(ctx, []string{
			"-kubeconfig", kubeconfig, "-topology", "seed", "-namespaces", "garden-dev", "-selector", "team=a",
			"-retry-max-delay", "2s",
			"-metrics-bind-address", "0", "-health-probe-bind-address", "0", "-zap-log-level", "error",
		})
	})
	p.Eventually(t, "shoot--dev--east marked", exampletest.MarkedBy(east, "demo", "hello", "shoot--dev--east"))

	hostShootControlPlane(t, seed, "dev", "west")
	p.Eventually(t, "shoot--dev--west marked", exampletest.MarkedBy(west, "demo", "hello", "shoot--dev--west"))
	p.Stop(t)
}

// hostShootControlPlane does on the seed what gardenlet and gardener-resource-manager do for a
// shoot whose control plane the seed hosts (here: the fleet member named like the shoot): the
// control-plane namespace shoot--<project>--<shoot> with the Secret "gardener" holding a
// kubeconfig for the shoot, and the extensions Cluster object embedding the Shoot.
func hostShootControlPlane(t *testing.T, seed client.Client, project, shoot string) {
	t.Helper()
	technicalID := "shoot--" + project + "--" + shoot
	embedded, err := json.Marshal(&gardencorev1beta1.Shoot{
		TypeMeta: metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: "Shoot"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "garden-" + project, Name: shoot, UID: types.UID("uid-" + shoot),
			Labels: map[string]string{"team": "a"},
		},
		Spec:   gardencorev1beta1.ShootSpec{Region: "local", Provider: gardencorev1beta1.Provider{Type: "local"}},
		Status: gardencorev1beta1.ShootStatus{TechnicalID: technicalID},
	})
	if err != nil {
		t.Fatal(err)
	}
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: technicalID}},
		&corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: technicalID, Name: gardener.SeedSecretName},
			Data:       map[string][]byte{gardener.SeedKubeconfigKey: fleet.Member(shoot).Kubeconfig()},
		},
		&extensionsv1alpha1.Cluster{
			ObjectMeta: metav1.ObjectMeta{Name: technicalID},
			Spec: extensionsv1alpha1.ClusterSpec{
				CloudProfile: runtime.RawExtension{Raw: []byte(`{"apiVersion":"core.gardener.cloud/v1beta1","kind":"CloudProfile","metadata":{"name":"local"}}`)},
				Seed:         runtime.RawExtension{Raw: []byte(`{"apiVersion":"core.gardener.cloud/v1beta1","kind":"Seed","metadata":{"name":"local"}}`)},
				Shoot:        runtime.RawExtension{Raw: embedded},
			},
		},
	}
	for _, obj := range objs {
		if err := seed.Create(t.Context(), obj); err != nil {
			t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
		}
	}
}

// seedClient installs the extensions Cluster CRD Gardener ships (in the module the provider is
// built with) on the seed member and returns a client for it that knows the Cluster type.
func seedClient(t *testing.T) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	sb := runtime.NewSchemeBuilder(clientgoscheme.AddToScheme, extensionsv1alpha1.AddToScheme, apiextensionsv1.AddToScheme)
	if err := sb.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(fleet.Member("seed").Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), "go", "list", "-m", "-f", "{{.Dir}}", "github.com/gardener/gardener").Output()
	if err != nil {
		t.Fatalf("locating the gardener module: %v", err)
	}
	file := filepath.Join(strings.TrimSpace(string(out)), "example", "seed-crds", "10-crd-extensions.gardener.cloud_clusters.yaml")
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
