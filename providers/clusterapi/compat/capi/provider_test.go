// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package capi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
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
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/yaml"

	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // upstream's ObjectToWatch may be a v1beta1 Cluster.
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	mcbuilder "mcr.dev/core/builder"
	"mcr.dev/core/envtest"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/providertest"
	mcreconcile "mcr.dev/core/reconcile"
	"mcr.dev/providers/clusterapi/compat/capi"
)

// Before SetupWithManager the provider serves nothing, and Start waits for it or for its
// context.
func TestBeforeSetupWithManager(t *testing.T) {
	p := capi.New(capi.Options{})
	if _, err := p.Get(t.Context(), "fleet/east"); !errors.Is(err, multicluster.ErrClusterNotFound) {
		t.Errorf("Get before SetupWithManager = %v, want ErrClusterNotFound", err)
	}
	if names := p.ListClusters(); len(names) != 0 {
		t.Errorf("ListClusters before SetupWithManager = %v", names)
	}
	if err := p.SetupWithManager(nil); err == nil {
		t.Error("SetupWithManager(nil) did not fail")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if err := p.Start(ctx, nil); err != nil {
		t.Errorf("Start without SetupWithManager returned %v when its context ended", err)
	}
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
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
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
				mgr := newManager(t, mgmt.Config(), p)
				if err := p.SetupWithManager(mgr); err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("SetupWithManager = %v; want an error containing %q", err, tc.want)
				}
			})
		}
		// Both Cluster versions are accepted.
		for _, obj := range []client.Object{&clusterv1.Cluster{}, &clusterv1beta1.Cluster{}} {
			p := capi.New(capi.Options{ObjectToWatch: obj})
			if err := p.SetupWithManager(newManager(t, mgmt.Config(), p)); err != nil {
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
	mgr := newManager(t, mgmt.Config(), provider)
	if err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.ConfigMap{}, "color", func(o client.Object) []string {
		return []string{o.(*corev1.ConfigMap).Data["color"]}
	}); err != nil {
		t.Fatal(err)
	}
	if err := provider.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	if err := provider.SetupWithManager(mgr); err == nil {
		t.Error("a second SetupWithManager did not fail")
	}
	var mu sync.Mutex
	seen := map[string]bool{}
	if err := mcbuilder.ControllerManagedBy(mgr).Named("configmaps").For(&corev1.ConfigMap{}).Complete(mcreconcile.Func(
		func(ctx context.Context, req mcreconcile.Request) (reconcile.Result, error) {
			cl, err := mgr.GetCluster(ctx, req.ClusterName)
			if err != nil {
				return reconcile.Result{}, err
			}
			cm := &corev1.ConfigMap{}
			if err := cl.GetClient().Get(ctx, req.NamespacedName, cm); err != nil {
				return reconcile.Result{}, client.IgnoreNotFound(err)
			}
			mu.Lock()
			defer mu.Unlock()
			seen[string(req.ClusterName)+" "+req.Namespace+"/"+req.Name+" "+cm.Data["color"]] = true
			return reconcile.Result{}, nil
		})); err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(runCtx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	}()

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
	eventually(t, "a reconcile of the member's ConfigMap in "+string(name), func() error {
		mu.Lock()
		defer mu.Unlock()
		if !seen[string(name)+" "+ns+"/widget blue"] {
			return fmt.Errorf("seen %v", seen)
		}
		return nil
	})
	cl, err := provider.Get(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if got := cl.GetConfig().Host; got != member.Host() {
		t.Errorf("cluster %s talks to %s, want the member %s", name, got, member.Host())
	}
	var list corev1.ConfigMapList
	if err := cl.GetCache().List(ctx, &list, client.InNamespace(ns), client.MatchingFields{"color": "blue"}); err != nil || len(list.Items) != 1 {
		t.Errorf("the index registered before SetupWithManager: %d items, %v", len(list.Items), err)
	}
	if names := provider.ListClusters(); len(names) != 1 || names[0] != name {
		t.Errorf("ListClusters = %v, want [%s]", names, name)
	}

	if err := mgmtClient.Delete(ctx, capiCluster); err != nil {
		t.Fatal(err)
	}
	eventually(t, string(name)+" disengaged", func() error {
		if _, err := provider.Get(ctx, name); !errors.Is(err, multicluster.ErrClusterNotFound) {
			return fmt.Errorf("Get = %v", err)
		}
		if names := provider.ListClusters(); len(names) != 0 {
			return fmt.Errorf("ListClusters = %v", names)
		}
		return nil
	})
}

// newManager returns a manager on cfg with provider, as upstream's example builds it (Secrets
// left out of the manager's cache).
func newManager(t *testing.T, cfg *rest.Config, provider multicluster.Provider) mcmanager.Manager {
	t.Helper()
	skipNameValidation := true
	mgr, err := mcmanager.New(cfg, provider, mcmanager.Options{
		Client:                 client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: &skipNameValidation},
	})
	if err != nil {
		t.Fatal(err)
	}
	return mgr
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
