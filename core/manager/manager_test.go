// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package manager_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
)

// probe is an Aware runnable that records its engagements.
type probe struct {
	mu      sync.Mutex
	fail    error
	engaged map[multicluster.ClusterName]context.Context
}

func newProbe(fail error) *probe {
	return &probe{fail: fail, engaged: map[multicluster.ClusterName]context.Context{}}
}

func (p *probe) Engage(ctx context.Context, name multicluster.ClusterName, _ cluster.Cluster) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fail != nil {
		return p.fail
	}
	p.engaged[name] = ctx
	return nil
}

func (p *probe) Start(ctx context.Context) error { <-ctx.Done(); return nil }

func (p *probe) ctx(name multicluster.ClusterName) context.Context {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.engaged[name]
}

// newManager builds a manager that is never started: engagement does not need it running, and
// nothing here talks to the (unreachable) host.
func newManager(t *testing.T, provider multicluster.Provider) mcmanager.Manager {
	t.Helper()
	local, err := manager.New(&rest.Config{Host: "https://127.0.0.1:1"}, manager.Options{Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := mcmanager.WithMultiCluster(local, provider)
	if err != nil {
		t.Fatal(err)
	}
	return mgr
}

func newCluster(t *testing.T) cluster.Cluster {
	t.Helper()
	cl, err := cluster.New(&rest.Config{Host: "https://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

func TestEngageIsAllOrNothing(t *testing.T) {
	mgr := newManager(t, nil)
	good, bad := newProbe(nil), newProbe(errors.New("cannot"))
	for _, r := range []manager.Runnable{good, bad} {
		if err := mgr.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	err := mgr.Engage(context.Background(), "a", newCluster(t))
	if err == nil {
		t.Fatal("Engage must fail when an Aware fails")
	}
	ctx := good.ctx("a")
	if ctx == nil {
		t.Fatal("the healthy Aware was not engaged")
	}
	<-ctx.Done() // rolled back: the engagement of the healthy Aware ended
	if got := mgr.EngagedClusters(); len(got) != 0 {
		t.Fatalf("a failed engagement is still listed: %v", got)
	}
}

func TestAwaresAddedLateAreReplayed(t *testing.T) {
	mgr := newManager(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := mgr.Engage(ctx, "a", newCluster(t)); err != nil {
		t.Fatal(err)
	}
	late := newProbe(nil)
	if err := mgr.Add(late); err != nil {
		t.Fatal(err)
	}
	engCtx := late.ctx("a")
	if engCtx == nil {
		t.Fatal("an Aware added after engagement was not engaged with the existing cluster")
	}
	cancel()
	<-engCtx.Done()
}

func TestReengage(t *testing.T) {
	mgr := newManager(t, nil)
	p := newProbe(nil)
	if err := mgr.Add(p); err != nil {
		t.Fatal(err)
	}
	first := newCluster(t)
	if err := mgr.Engage(context.Background(), "a", first); err != nil {
		t.Fatal(err)
	}
	firstCtx := p.ctx("a")
	// The same instance again is a no-op.
	if err := mgr.Engage(context.Background(), "a", first); err != nil {
		t.Fatal(err)
	}
	if p.ctx("a") != firstCtx || firstCtx.Err() != nil {
		t.Fatal("re-engaging the same instance replaced the engagement")
	}
	// A new instance replaces the old one, whose context ends.
	if err := mgr.Engage(context.Background(), "a", newCluster(t)); err != nil {
		t.Fatal(err)
	}
	<-firstCtx.Done()
	if p.ctx("a") == firstCtx || p.ctx("a").Err() != nil {
		t.Fatal("the new instance is not engaged")
	}
	if got := mgr.EngagedClusters(); len(got) != 1 || got[0] != "a" {
		t.Fatalf("engaged clusters: %v", got)
	}
}

func TestGetClusterWithoutProvider(t *testing.T) {
	mgr := newManager(t, nil)
	if cl, err := mgr.GetCluster(context.Background(), mcmanager.LocalCluster); err != nil || cl == nil {
		t.Fatalf("the local cluster: got (%v, %v)", cl, err)
	}
	if _, err := mgr.GetCluster(context.Background(), "other"); !errors.Is(err, multicluster.ErrClusterNotFound) {
		t.Fatalf("unknown cluster: got %v, want ErrClusterNotFound", err)
	}
	if _, err := mgr.ClusterFromContext(context.Background()); err == nil {
		t.Fatal("ClusterFromContext without a cluster in the context must fail")
	}
}
