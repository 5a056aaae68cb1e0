// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package capi_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/yaml"

	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // upstream's ObjectToWatch may be a v1beta1 Cluster.
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"mcr.dev/core/envtest"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/clusterapi/compat/capi"
)

// Before SetupWithManager the provider serves nothing, and Start waits for it or for its
// context.
func TestBeforeSetupWithManager(t *testing.T) {
	p := capi.New(capi.Options{})
	providertest.CheckNotSetUp(t, p, "fleet/east", func() error { return p.SetupWithManager(nil) })
}

// A program written for multicluster-runtime's Cluster API provider runs as its documentation
// says: New, mcmanager.New, an index registered before SetupWithManager, SetupWithManager, a
// controller. A Cluster is engaged under "<namespace>/<name>" through its kubeconfig Secret once
// its control plane is initialized, the controller reconciles in it, the index reaches it, and
// deleting the Cluster disengages it. Options the provider cannot honor make SetupWithManager
// fail.
func TestUpstreamUsage(t *testing.T) {
	fleet := envtest.StartForTest(t, "mgmt", "member")
	ctx := t.Context()
	mgmt, member := fleet.Member("mgmt"), fleet.Member("member")
	installClusterCRD(t, mgmt.Config())
	scheme := runtime.NewScheme()
	sb := runtime.NewSchemeBuilder(clientgoscheme.AddToScheme, clusterv1.AddToScheme)
	if err := sb.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	mgmtClient, err := client.New(mgmt.Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	memberClient, err := client.New(member.Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	const ns = "fleet"
	for _, c := range []client.Client{mgmtClient, memberClient} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("options without a counterpart", func(t *testing.T) {
		for name, tc := range map[string]struct {
			opts capi.Options
			want string
		}{
			"GetSecret": {
				opts: capi.Options{GetSecret: func(context.Context, client.Client, client.Object) ([]byte, error) { return nil, nil }},
				want: "Options.GetSecret is not supported",
			},
			"NewCluster": {
				opts: capi.Options{NewCluster: func(_ context.Context, _ client.Object, cfg *rest.Config, opts ...cluster.Option) (cluster.Cluster, error) {
					return cluster.New(cfg, opts...)
				}},
				want: "Options.NewCluster is not supported",
			},
			"ObjectToWatch": {
				opts: capi.Options{ObjectToWatch: &corev1.ConfigMap{}},
				want: "Options.ObjectToWatch of type *v1.ConfigMap is not supported",
			},
		} {
			t.Run(name, func(t *testing.T) {
				p := capi.New(tc.opts)
				mgr := providertest.NewUpstreamManager(t, mgmt.Config(), p, secretsUncached)
				if err := p.SetupWithManager(mgr); err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("SetupWithManager = %v; want an error containing %q", err, tc.want)
				}
			})
		}
		// Both Cluster versions are accepted.
		for _, obj := range []client.Object{&clusterv1.Cluster{}, &clusterv1beta1.Cluster{}} {
			p := capi.New(capi.Options{ObjectToWatch: obj})
			if err := p.SetupWithManager(providertest.NewUpstreamManager(t, mgmt.Config(), p, secretsUncached)); err != nil {
				t.Errorf("ObjectToWatch %T: SetupWithManager: %v", obj, err)
			}
		}
	})

	// The kubeconfig Secret as Cluster API writes it, and a Cluster whose control plane is not
	// initialized yet.
	if err := mgmtClient.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "east-kubeconfig", Labels: map[string]string{clusterv1.ClusterNameLabel: "east"}},
		Type:       clusterv1.ClusterSecretType,
		Data:       map[string][]byte{"value": member.Kubeconfig()},
	}); err != nil {
		t.Fatal(err)
	}
	capiCluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "east"},
		Spec: clusterv1.ClusterSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{
			APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "DockerCluster", Name: "east",
		}},
	}
	if err := mgmtClient.Create(ctx, capiCluster); err != nil {
		t.Fatal(err)
	}
	if err := memberClient.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "widget"},
		Data:       map[string]string{"color": "blue"},
	}); err != nil {
		t.Fatal(err)
	}

	// The program, as upstream's example writes it.
	provider := capi.New(capi.Options{})
	program := providertest.StartUpstreamProgram(t, mgmt.Config(), provider, secretsUncached, provider.SetupWithManager)

	name := multicluster.ClusterName(ns + "/east")
	time.Sleep(time.Second)
	if _, err := provider.Get(ctx, name); !errors.Is(err, multicluster.ErrClusterNotFound) {
		t.Fatalf("a Cluster whose control plane is not initialized: Get = %v, want ErrClusterNotFound", err)
	}

	// Cluster API's core controller reports the control plane initialized.
	eventually(t, "status of the Cluster updated", func() error {
		if err := mgmtClient.Get(ctx, client.ObjectKeyFromObject(capiCluster), capiCluster); err != nil {
			return err
		}
		capiCluster.Status.Initialization.ControlPlaneInitialized = ptr.To(true)
		return mgmtClient.Status().Update(ctx, capiCluster)
	})
	program.WaitEngaged(t, name, member.Host(), ns, "widget", "blue")

	if err := mgmtClient.Delete(ctx, capiCluster); err != nil {
		t.Fatal(err)
	}
	program.WaitDisengaged(t, name)
}

// secretsUncached are the manager options of upstream's example: Secrets left out of the
// manager's cache.
var secretsUncached = mcmanager.Options{
	Client: client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}},
}

// installClusterCRD installs the Cluster CRD of the Cluster API release whose API types the
// provider is built with, read from the Go module cache (downloaded when missing), and waits
// until it is established. Only v1beta2, the storage version, is used, so no conversion
// webhook is needed.
func installClusterCRD(t *testing.T, cfg *rest.Config) {
	t.Helper()
	ctx := t.Context()
	version := "v1.14.2"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range bi.Deps {
			if dep.Path == "sigs.k8s.io/cluster-api/api" && dep.Version != "" && dep.Version != "(devel)" {
				version = dep.Version
			}
		}
	}
	const crdFile = "core/config/crd/bases/cluster.x-k8s.io_clusters.yaml"
	out, err := exec.CommandContext(ctx, "go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOMODCACHE: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "sigs.k8s.io", "cluster-api@"+version)
	if _, err := os.Stat(filepath.Join(dir, crdFile)); err != nil {
		cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", "sigs.k8s.io/cluster-api@"+version)
		cmd.Dir = t.TempDir()
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go mod download sigs.k8s.io/cluster-api@%s: %v", version, err)
		}
		var info struct{ Dir string }
		if err := json.Unmarshal(out, &info); err != nil {
			t.Fatal(err)
		}
		dir = info.Dir
	}
	data, err := os.ReadFile(filepath.Join(dir, crdFile))
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crd); err != nil {
		t.Fatal(err)
	}
	crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := envtest.InstallCRDs(ctx, c, crd); err != nil {
		t.Fatal(err)
	}
}

func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	providertest.Eventually(t, time.Minute, what, check)
}
