// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusters_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/envtest"
	"mcr.dev/core/internal/testcheck"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/clusters"
)

var fleet *envtest.Fleet

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	f, err := envtest.Start(ctx, envtest.Options{Members: []string{"a", "b"}})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fleet = f
	code := m.Run()
	_ = f.Stop()
	os.Exit(code)
}

// engagements is an Aware that records which instance is engaged under each name.
type engagements struct {
	mu      sync.Mutex
	engaged map[multicluster.ClusterName]cluster.Cluster
}

func (e *engagements) Engage(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.engaged == nil {
		e.engaged = map[multicluster.ClusterName]cluster.Cluster{}
	}
	e.engaged[name] = cl
	context.AfterFunc(ctx, func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.engaged[name] == cl {
			delete(e.engaged, name)
		}
	})
	return nil
}

func (e *engagements) get(name multicluster.ClusterName) cluster.Cluster {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.engaged[name]
}

// stoppable wraps a cluster and reports when its Start has returned.
type stoppable struct {
	cluster.Cluster
	stopped chan struct{}
}

func (s *stoppable) Start(ctx context.Context) error {
	defer close(s.stopped)
	return s.Cluster.Start(ctx)
}

func (s *stoppable) hasStopped() bool {
	select {
	case <-s.stopped:
		return true
	default:
		return false
	}
}

func newCluster(t *testing.T, cfg *rest.Config) *stoppable {
	t.Helper()
	cl, err := cluster.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &stoppable{Cluster: cl, stopped: make(chan struct{})}
}

// start runs p.Start; before returning, it waits until a cluster parked before Start is
// engaged, so that later Adds are sure to take the after-Start path.
func start(t *testing.T, p *clusters.Provider, aware *engagements) (stop func()) {
	probe := newCluster(t, fleet.Member("b").Config())
	if err := p.Add(t.Context(), "probe", probe); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- p.Start(ctx, aware) }()
	testcheck.WaitFor(t, "Start to engage the parked probe cluster", func() bool { return aware.get("probe") == probe })
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Start: %v", err)
		}
	}
}

func TestAddBeforeAndAfterStart(t *testing.T) {
	p := clusters.New(clusters.Options{})
	aware := &engagements{}
	a := newCluster(t, fleet.Member("a").Config())
	if err := p.Add(t.Context(), "a", a); err != nil {
		t.Fatal(err)
	}
	if err := p.Add(t.Context(), "a", a); err == nil {
		t.Fatal("parking a name twice succeeded")
	}
	if _, err := p.Get(t.Context(), "a"); !errors.Is(err, multicluster.ErrClusterNotFound) {
		t.Fatalf("a parked cluster is visible: %v", err)
	}

	stop := start(t, p, aware)
	testcheck.WaitFor(t, "the parked cluster to be engaged", func() bool { return aware.get("a") == a })

	// After Start, Add returns once the cluster is engaged. Its context is not the cluster's.
	b := newCluster(t, fleet.Member("b").Config())
	addCtx, cancelAdd := context.WithCancel(t.Context())
	if err := p.Add(addCtx, "b", b); err != nil {
		t.Fatal(err)
	}
	cancelAdd()
	if aware.get("b") != b {
		t.Fatal("Add returned before the cluster was engaged")
	}
	if got, err := p.Get(t.Context(), "b"); err != nil || got != b {
		t.Fatalf("Get b = %v, %v", got, err)
	}

	p.Remove("b")
	if !b.hasStopped() {
		t.Fatal("Remove returned before the cluster stopped")
	}
	testcheck.WaitFor(t, "b to be disengaged", func() bool { return aware.get("b") == nil })
	if aware.get("a") != a {
		t.Fatal("ending the Add context of b, or removing b, disengaged a")
	}

	stop()
	if !a.hasStopped() {
		t.Fatal("Start returned before its clusters stopped")
	}
	testcheck.WaitFor(t, "a to be disengaged", func() bool { return aware.get("a") == nil })
}

func TestAddOrReplace(t *testing.T) {
	p := clusters.New(clusters.Options{})
	aware := &engagements{}
	stop := start(t, p, aware)
	defer stop()

	first := newCluster(t, fleet.Member("a").Config())
	if err := p.AddOrReplace(t.Context(), "a", first); err != nil {
		t.Fatal(err)
	}
	if err := p.AddOrReplace(t.Context(), "a", newCluster(t, fleet.Member("a").Config())); err != nil {
		t.Fatal(err)
	}
	if aware.get("a") != first {
		t.Fatal("an equal cluster replaced the engaged one")
	}
	cfg := fleet.Member("a").Config()
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "rotated", Groups: []string{"system:masters"}}
	second := newCluster(t, cfg)
	if err := p.AddOrReplace(t.Context(), "a", second); err != nil {
		t.Fatal(err)
	}
	if aware.get("a") != second || !first.hasStopped() {
		t.Fatal("the rotated cluster did not replace the old one")
	}
}

// An Add waiting for an unreachable cluster holds no lock: other Adds and Gets proceed, and
// Remove aborts it.
func TestSlowAddBlocksNobody(t *testing.T) {
	down, err := fleet.AddMember(t.Context(), "down")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fleet.RemoveMember("down") })
	unreachable := newCluster(t, down.Config())
	if _, err := unreachable.GetCache().GetInformer(t.Context(), &corev1.ConfigMap{}, cache.BlockUntilSynced(false)); err != nil {
		t.Fatal(err)
	}
	if err := down.Stop(); err != nil {
		t.Fatal(err)
	}

	p := clusters.New(clusters.Options{CacheSyncTimeout: 10 * time.Minute})
	aware := &engagements{}
	stop := start(t, p, aware)
	defer stop()

	slowAdd := make(chan error, 1)
	go func() { slowAdd <- p.Add(t.Context(), "down", unreachable) }()

	a := newCluster(t, fleet.Member("a").Config())
	if err := p.Add(t.Context(), "a", a); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Get(t.Context(), "a"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-slowAdd:
		t.Fatalf("the unreachable cluster's Add returned early: %v", err)
	default:
	}

	// The slow Add may not have reserved the name yet; Remove until it has given up.
	for done := false; !done; {
		p.Remove("down")
		select {
		case err := <-slowAdd:
			if err == nil {
				t.Fatal("the aborted Add reported success")
			}
			done = true
		case <-time.After(100 * time.Millisecond):
		}
	}
	if !unreachable.hasStopped() {
		t.Fatal("the aborted cluster still runs")
	}
	if aware.get("down") != nil {
		t.Fatal("the unreachable cluster was engaged")
	}
}
