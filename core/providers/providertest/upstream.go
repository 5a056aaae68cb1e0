// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package providertest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	mcbuilder "mcr.dev/core/builder"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
	mcreconcile "mcr.dev/core/reconcile"
)

// UpstreamProvider is a drop-in for one of multicluster-runtime's providers (a compat package):
// it serves nothing until the program calls its SetupWithManager, and lists what it engaged.
type UpstreamProvider interface {
	multicluster.Provider
	multicluster.ProviderRunnable
	ListClusters() []multicluster.ClusterName
}

// UpstreamColorIndex is the field UpstreamProgram indexes ConfigMaps by: their data key "color".
const UpstreamColorIndex = "color"

// CheckNotSetUp checks p before SetupWithManager: Get of name is ErrClusterNotFound,
// ListClusters is empty, setUpWithoutManager (SetupWithManager given no manager) fails, and
// Start waits for its context.
func CheckNotSetUp(t *testing.T, p UpstreamProvider, name multicluster.ClusterName, setUpWithoutManager func() error) {
	t.Helper()
	if _, err := p.Get(t.Context(), name); !errors.Is(err, multicluster.ErrClusterNotFound) {
		t.Errorf("Get before SetupWithManager = %v, want ErrClusterNotFound", err)
	}
	if names := p.ListClusters(); len(names) != 0 {
		t.Errorf("ListClusters before SetupWithManager = %v", names)
	}
	if err := setUpWithoutManager(); err == nil {
		t.Error("SetupWithManager without a manager did not fail")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if err := p.Start(ctx, nil); err != nil {
		t.Errorf("Start without SetupWithManager returned %v when its context ended", err)
	}
}

// NewUpstreamManager returns a manager on host with p, as upstream's examples build it, with
// opts: metrics and health probes off, and controller names that may repeat across a test's
// managers.
func NewUpstreamManager(t testing.TB, host *rest.Config, p multicluster.Provider, opts mcmanager.Options) mcmanager.Manager {
	t.Helper()
	opts.Metrics = metricsserver.Options{BindAddress: "0"}
	opts.HealthProbeBindAddress = "0"
	opts.Controller = config.Controller{SkipNameValidation: ptr.To(true)}
	mgr, err := mcmanager.New(host, p, opts)
	if err != nil {
		t.Fatal(err)
	}
	return mgr
}

// UpstreamProgram is a program written for one of multicluster-runtime's providers, as its
// documentation writes it: New, a manager, an index of ConfigMaps (UpstreamColorIndex)
// registered before SetupWithManager, SetupWithManager, and a controller over ConfigMaps that
// reads each it reconciles from its cluster.
type UpstreamProgram struct {
	Provider UpstreamProvider
	Manager  mcmanager.Manager

	mu   sync.Mutex
	seen map[string]bool // "<cluster> <namespace>/<name> <color>"
}

// StartUpstreamProgram builds the program on host around p (see NewUpstreamManager for opts)
// and runs it until the test ends. setUp is p's SetupWithManager; a second call must fail.
func StartUpstreamProgram(t *testing.T, host *rest.Config, p UpstreamProvider, opts mcmanager.Options, setUp func(mcmanager.Manager) error) *UpstreamProgram {
	t.Helper()
	ctx := t.Context()
	u := &UpstreamProgram{Provider: p, Manager: NewUpstreamManager(t, host, p, opts), seen: map[string]bool{}}
	if err := u.Manager.GetFieldIndexer().IndexField(ctx, &corev1.ConfigMap{}, UpstreamColorIndex, func(o client.Object) []string {
		return []string{o.(*corev1.ConfigMap).Data["color"]}
	}); err != nil {
		t.Fatal(err)
	}
	if err := setUp(u.Manager); err != nil {
		t.Fatal(err)
	}
	if err := setUp(u.Manager); err == nil {
		t.Error("a second SetupWithManager did not fail")
	}
	if err := mcbuilder.ControllerManagedBy(u.Manager).Named("configmaps").For(&corev1.ConfigMap{}).Complete(mcreconcile.Func(u.reconcile)); err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- u.Manager.Start(runCtx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	return u
}

func (u *UpstreamProgram) reconcile(ctx context.Context, req mcreconcile.Request) (reconcile.Result, error) {
	cl, err := u.Manager.GetCluster(ctx, req.ClusterName)
	if err != nil {
		return reconcile.Result{}, err
	}
	cm := &corev1.ConfigMap{}
	if err := cl.GetClient().Get(ctx, req.NamespacedName, cm); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.seen[fmt.Sprintf("%s %s %s", req.ClusterName, req.NamespacedName, cm.Data["color"])] = true
	return reconcile.Result{}, nil
}

// WaitEngaged waits until the controller reconciled the ConfigMap namespace/name of color in
// the cluster name, and checks what the provider serves then: Get's cluster talks to host, the
// index registered before SetupWithManager finds that ConfigMap by its color, and ListClusters
// is name alone.
func (u *UpstreamProgram) WaitEngaged(t *testing.T, name multicluster.ClusterName, host, namespace, configMap, color string) {
	t.Helper()
	ctx := t.Context()
	key := fmt.Sprintf("%s %s/%s %s", name, namespace, configMap, color)
	Eventually(t, time.Minute, "a reconcile of the member's ConfigMap in "+string(name), func() error {
		u.mu.Lock()
		defer u.mu.Unlock()
		if !u.seen[key] {
			return fmt.Errorf("seen %v", u.seen)
		}
		return nil
	})
	cl, err := u.Provider.Get(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if got := cl.GetConfig().Host; got != host {
		t.Errorf("cluster %s talks to %s, want the member %s", name, got, host)
	}
	var list corev1.ConfigMapList
	if err := cl.GetCache().List(ctx, &list, client.InNamespace(namespace), client.MatchingFields{UpstreamColorIndex: color}); err != nil || len(list.Items) != 1 {
		t.Errorf("the index registered before SetupWithManager: %d items, %v", len(list.Items), err)
	}
	if names := u.Provider.ListClusters(); len(names) != 1 || names[0] != name {
		t.Errorf("ListClusters = %v, want [%s]", names, name)
	}
}

// WaitDisengaged waits until the provider no longer serves name: Get returns ErrClusterNotFound
// and ListClusters is empty.
func (u *UpstreamProgram) WaitDisengaged(t *testing.T, name multicluster.ClusterName) {
	t.Helper()
	Eventually(t, time.Minute, string(name)+" disengaged", func() error {
		if _, err := u.Provider.Get(t.Context(), name); !errors.Is(err, multicluster.ErrClusterNotFound) {
			return fmt.Errorf("the provider still serves it: Get returned %v", err)
		}
		if names := u.Provider.ListClusters(); len(names) != 0 {
			return fmt.Errorf("the provider still lists clusters: %v", names)
		}
		return nil
	})
}
