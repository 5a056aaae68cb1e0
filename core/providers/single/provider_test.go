// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package single_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/envtest"
	"mcr.dev/core/internal/testcheck"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/single"
)

var fleet *envtest.Fleet

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	f, err := envtest.Start(ctx, envtest.Options{Members: []string{"east"}})
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

// engagements is an Aware that records what is engaged and for how long.
type engagements struct {
	mu      sync.Mutex
	engaged map[multicluster.ClusterName]cluster.Cluster
	fail    error
}

func (e *engagements) Engage(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster) error {
	if e.fail != nil {
		return e.fail
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.engaged == nil {
		e.engaged = map[multicluster.ClusterName]cluster.Cluster{}
	}
	e.engaged[name] = cl
	context.AfterFunc(ctx, func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		delete(e.engaged, name)
	})
	return nil
}

func (e *engagements) get(name multicluster.ClusterName) cluster.Cluster {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.engaged[name]
}

// runningCluster wraps a cluster and tells whether its Start is running.
type runningCluster struct {
	cluster.Cluster
	mu      sync.Mutex
	running bool
}

func (r *runningCluster) Start(ctx context.Context) error {
	r.set(true)
	defer r.set(false)
	return r.Cluster.Start(ctx)
}

func (r *runningCluster) set(v bool) { r.mu.Lock(); r.running = v; r.mu.Unlock() }

func (r *runningCluster) isRunning() bool { r.mu.Lock(); defer r.mu.Unlock(); return r.running }

func newCluster(t *testing.T) *runningCluster {
	t.Helper()
	cl, err := cluster.New(fleet.Member("east").Config())
	if err != nil {
		t.Fatal(err)
	}
	return &runningCluster{Cluster: cl}
}

func TestStartEngagesStartsAndDisengages(t *testing.T) {
	cl := newCluster(t)
	p := single.New("east", cl, single.Options{})

	if _, err := p.Get(t.Context(), "east"); !errors.Is(err, multicluster.ErrClusterNotFound) {
		t.Fatalf("Get before Start: %v", err)
	}
	// An index registered before Start reaches the cluster.
	if err := p.IndexField(t.Context(), &corev1.ConfigMap{}, "color", func(o client.Object) []string {
		return []string{o.(*corev1.ConfigMap).Data["color"]}
	}); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	aware := &engagements{}
	done := make(chan error, 1)
	go func() { done <- p.Start(ctx, aware) }()
	testcheck.WaitFor(t, "the cluster to be engaged", func() bool { return aware.get("east") != nil })

	if got := aware.get("east"); got != cl {
		t.Fatalf("engaged %v, want the configured cluster", got)
	}
	if !cl.isRunning() {
		t.Fatal("the provider engaged the cluster without starting it")
	}
	if got, err := p.Get(ctx, "east"); err != nil || got != cl {
		t.Fatalf("Get east = %v, %v", got, err)
	}
	if _, err := p.Get(ctx, "west"); !errors.Is(err, multicluster.ErrClusterNotFound) {
		t.Fatalf("Get west: %v", err)
	}

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "single-index"}, Data: map[string]string{"color": "ochre"}}
	if err := cl.GetClient().Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.GetClient().Delete(context.Background(), cm) })
	testcheck.WaitFor(t, "the index to find the configmap", func() bool {
		var list corev1.ConfigMapList
		return cl.GetCache().List(ctx, &list, client.MatchingFields{"color": "ochre"}) == nil && len(list.Items) == 1
	})

	if err := p.Start(ctx, aware); err == nil {
		t.Fatal("a second Start succeeded")
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Start: %v", err)
	}
	if cl.isRunning() {
		t.Fatal("Start returned while the cluster it started still runs")
	}
	testcheck.WaitFor(t, "the cluster to be disengaged", func() bool { return aware.get("east") == nil })
	if _, err := p.Get(t.Context(), "east"); !errors.Is(err, multicluster.ErrClusterNotFound) {
		t.Fatalf("Get after Start returned: %v", err)
	}
}

func TestAlreadyRunningClusterIsNotStarted(t *testing.T) {
	cl := newCluster(t)
	ownerCtx, stopOwner := context.WithCancel(t.Context())
	defer stopOwner()
	go func() { _ = cl.Cluster.Start(ownerCtx) }() // started by its owner, not through the wrapper

	p := single.New("east", cl, single.Options{AlreadyRunning: true})
	ctx, cancel := context.WithCancel(t.Context())
	aware := &engagements{}
	done := make(chan error, 1)
	go func() { done <- p.Start(ctx, aware) }()
	testcheck.WaitFor(t, "the cluster to be engaged", func() bool { return aware.get("east") != nil })
	if cl.isRunning() {
		t.Fatal("the provider started a cluster its owner runs")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	testcheck.WaitFor(t, "the cluster to be disengaged", func() bool { return aware.get("east") == nil })
	// The owner's cluster keeps working.
	var nss corev1.NamespaceList
	if err := cl.GetClient().List(t.Context(), &nss); err != nil {
		t.Fatalf("the owner's cluster stopped working: %v", err)
	}
}

func TestFailedEngageFailsStart(t *testing.T) {
	cl := newCluster(t)
	p := single.New("east", cl, single.Options{})
	boom := errors.New("boom")
	if err := p.Start(t.Context(), &engagements{fail: boom}); !errors.Is(err, boom) {
		t.Fatalf("Start = %v, want the Engage error", err)
	}
	if cl.isRunning() {
		t.Fatal("the cluster still runs after a failed Start")
	}
}
