// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package faults

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"runtime/pprof"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	mcbuilder "mcr.dev/core/builder"
	"mcr.dev/core/envtest"
	"mcr.dev/core/internal/testcheck"
	"mcr.dev/core/multicluster"
)

const (
	// hungMembers is how many members point at the hung endpoint.
	hungMembers = 100
	// engageBound bounds how long a good member may take from Engage to its first reconcile.
	// It only catches a member held up by the hung ones; the figures are what the test reports.
	engageBound = 30 * time.Second
	// hungSoak is how long the hung members stay engaged before their cost is measured a second
	// time: long enough for several rounds of retries (the controller's retry backoff reaches
	// 32 s, client-go's TLS handshake timeout is 10 s).
	hungSoak = 45 * time.Second
)

// Many members whose endpoint accepts connections and never answers, engaged next to a good
// one: the good member engages and reconciles without delay, and what the hung members cost
// (goroutines, heap) stays bounded while they stay engaged and goes away when they are
// disengaged.
func TestHungMembers(t *testing.T) {
	hung := envtest.StartHungEndpointForTest(t)
	ns := uniqueName("hung")
	createNamespace(t, ns, "a")
	l := newLedger(ns)
	provider := newEngageNowProvider()
	mgr := newManager(t, provider, logr.Discard())
	if err := mcbuilder.ControllerManagedBy(mgr).Named("hung-" + ns).For(&corev1.ConfigMap{}).Complete(l.reconciler(mgr)); err != nil {
		t.Fatal(err)
	}
	runManager(t, mgr)
	<-provider.started
	a := newWriter(t, l, "a")
	if err := a.create(t.Context()); err != nil {
		t.Fatal(err)
	}
	seed := a.live[0]

	// engageGood engages member a under name and returns how long it took until its first
	// reconcile.
	engageGood := func(name string) time.Duration {
		t.Helper()
		cl, err := cluster.New(fleet.Member("a").Config(), func(o *cluster.Options) { o.Logger = logr.Discard() })
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		provider.add(t, multicluster.ClusterName(name), cl)
		if !testcheck.Within(engageBound, func() bool { return l.sawAny(name, seed) }) {
			t.Fatalf("member a, engaged as %s next to %d hung members, reconciled nothing within %s", name, provider.count()-1, engageBound)
		}
		return time.Since(start)
	}

	// The cost of the hung members is what the process holds with them and the good member
	// engaged, less what it holds with the good member alone.
	goroutines0, heap0 := settledCost()
	alone := engageGood("alone")
	goroutinesGood, heapGood := settledCost()
	provider.remove("alone")

	for i := range hungMembers {
		cl, err := cluster.New(hung.Config(), func(o *cluster.Options) { o.Logger = logr.Discard() })
		if err != nil {
			t.Fatal(err)
		}
		provider.add(t, multicluster.ClusterName(fmt.Sprintf("hung-%d", i)), cl)
	}
	next := engageGood("a")
	t.Logf("good member, Engage to first reconcile: %s alone, %s next to %d hung members", alone.Round(time.Millisecond), next.Round(time.Millisecond), hungMembers)

	// While the hung members stay engaged, the good one reconciles as usual.
	// Canceled rather than with a deadline: the client's rate limiter fails a request that
	// would end after the deadline, which is not the member's fault.
	churnCtx, stopChurn := context.WithCancel(t.Context())
	defer time.AfterFunc(15*time.Second, stopChurn).Stop()
	churned := time.Now()
	if err := a.churn(churnCtx, churnInterval); err != nil {
		t.Fatal(err)
	}
	inA := func(cluster string, at time.Time) bool { return cluster == "a" && !at.Before(churned) }
	if !testcheck.Within(engageBound, func() bool { lost, _ := l.lost(inA); return len(lost) == 0 }) {
		lost, _ := l.lost(inA)
		t.Errorf("writes to the good member not reconciled next to hung members: %s", firstLines(lost, 10))
	}
	t.Logf("good member next to %d hung members, write to reconcile: %s", hungMembers, summary(l.latencies(inA)))

	goroutines1, heap1 := settledCost()
	time.Sleep(hungSoak)
	goroutines2, heap2 := settledCost()
	hungEndpoint := fmt.Sprintf("%d connections accepted, %d open", hung.Accepted(), hung.Open())

	for i := range hungMembers {
		provider.remove(multicluster.ClusterName(fmt.Sprintf("hung-%d", i)))
	}
	provider.remove("a")
	// What is still waiting on the endpoint (a TLS handshake, a discovery request) ends with
	// the client's own timeout; everything else ends with the engagement.
	var goroutines3, heap3 uint64
	settled := testcheck.Within(time.Minute, func() bool {
		goroutines3, heap3 = settledCost()
		return goroutines3 <= goroutines0+uint64(hungMembers)/10
	})
	perMember := func(g, h uint64) string {
		return fmt.Sprintf("%.1f goroutines and %.1f KiB of heap per hung member",
			(float64(g)-float64(goroutinesGood))/hungMembers, (float64(h)-float64(heapGood))/hungMembers/1024)
	}
	t.Logf("%d hung members engaged: %s; %s later: %s", hungMembers, perMember(goroutines1, heap1), hungSoak, perMember(goroutines2, heap2))
	t.Logf("hung endpoint: %s", hungEndpoint)
	t.Logf("no member engaged: %d goroutines, %.1f MiB heap; the good member alone: %d goroutines, %.1f MiB heap; all disengaged again: %d goroutines, %.1f MiB heap",
		goroutines0, float64(heap0)/(1<<20), goroutinesGood, float64(heapGood)/(1<<20), goroutines3, float64(heap3)/(1<<20))
	// Bounded: retries replace each other instead of piling up.
	if goroutines2 > goroutines1+(goroutines1-goroutinesGood)/2+hungMembers {
		t.Errorf("goroutines grew from %d to %d in %s while the hung members stayed engaged", goroutines1, goroutines2, hungSoak)
	}
	if !settled {
		var buf bytes.Buffer
		_ = pprof.Lookup("goroutine").WriteTo(&buf, 1)
		t.Errorf("%d goroutines a minute after every member was disengaged, %d before any was engaged:\n%s", goroutines3, goroutines0, buf.String())
	}
}

// sawAny reports whether the reconciler read the object in cluster.
func (l *ledger) sawAny(cluster, name string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	o, ok := l.objects[cluster+"/"+name]
	return ok && len(o.seen) > 0
}

// settledCost returns the goroutine count and the live heap once the goroutine count has
// stopped changing for a moment.
func settledCost() (goroutines, heap uint64) {
	last := testcheck.SettledGoroutines()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return uint64(last), ms.HeapAlloc
}

// engageNowProvider starts every cluster it is given and engages it at once, without waiting
// for its cache to sync: its members are engaged whether or not their endpoint answers, as
// members that hang after they were engaged are.
type engageNowProvider struct {
	started chan struct{}

	mu       sync.Mutex
	ctx      context.Context
	aware    multicluster.Aware
	clusters map[multicluster.ClusterName]*engagedMember
}

type engagedMember struct {
	cluster cluster.Cluster
	cancel  context.CancelFunc
	done    chan struct{}
}

func newEngageNowProvider() *engageNowProvider {
	return &engageNowProvider{started: make(chan struct{}), clusters: map[multicluster.ClusterName]*engagedMember{}}
}

func (p *engageNowProvider) Start(ctx context.Context, aware multicluster.Aware) error {
	p.mu.Lock()
	p.ctx, p.aware = ctx, aware
	close(p.started)
	p.mu.Unlock()
	<-ctx.Done()
	p.mu.Lock()
	names := make([]multicluster.ClusterName, 0, len(p.clusters))
	for name := range p.clusters {
		names = append(names, name)
	}
	p.mu.Unlock()
	for _, name := range names {
		p.remove(name)
	}
	return nil
}

// add starts cl and engages it under name.
func (p *engageNowProvider) add(t testing.TB, name multicluster.ClusterName, cl cluster.Cluster) {
	t.Helper()
	p.mu.Lock()
	ctx, cancel := context.WithCancel(p.ctx)
	m := &engagedMember{cluster: cl, cancel: cancel, done: make(chan struct{})}
	p.clusters[name] = m
	aware := p.aware
	p.mu.Unlock()
	go func() {
		defer close(m.done)
		_ = cl.Start(ctx)
	}()
	if err := aware.Engage(ctx, name, cl); err != nil {
		t.Fatalf("engaging %s: %v", name, err)
	}
}

// remove disengages and stops the named cluster, and waits until it has stopped.
func (p *engageNowProvider) remove(name multicluster.ClusterName) {
	p.mu.Lock()
	m, ok := p.clusters[name]
	delete(p.clusters, name)
	p.mu.Unlock()
	if !ok {
		return
	}
	m.cancel()
	<-m.done
	m.cluster.GetHTTPClient().CloseIdleConnections()
}

func (p *engageNowProvider) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.clusters)
}

func (p *engageNowProvider) Get(_ context.Context, name multicluster.ClusterName) (cluster.Cluster, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if m, ok := p.clusters[name]; ok {
		return m.cluster, nil
	}
	return nil, fmt.Errorf("cluster %q: %w", name, multicluster.ErrClusterNotFound)
}

func (p *engageNowProvider) IndexField(context.Context, client.Object, string, client.IndexerFunc) error {
	return nil
}
