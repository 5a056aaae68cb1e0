// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package sharding_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/sharding"
)

// Short timings keep failover tests quick; LeaseDuration - RenewDeadline (1s) is the margin a
// replica has to notice its own lapse, generous on a busy 2-core machine running -race.
const (
	testLeaseDuration = 3 * time.Second
	testRetryPeriod   = 200 * time.Millisecond
	// settleTimeout is a generous bound for any ownership change to complete.
	settleTimeout = 60 * time.Second
)

// testLogger logs to stderr when MCR_TEST_LOG is set, and nowhere otherwise.
func testLogger() logr.Logger {
	if os.Getenv("MCR_TEST_LOG") == "" {
		return logr.Discard()
	}
	return funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, time.Now().Format("15:04:05.000"), prefix, args) }, funcr.Options{Verbosity: 1})
}

// recorder follows which replica's Awares are engaged with which cluster, across replicas,
// and records every moment two replicas were engaged with one cluster at once.
type recorder struct {
	mu       sync.Mutex
	live     map[multicluster.ClusterName]map[string]context.Context
	count    map[string]int // engagements by replica/cluster
	overlaps []string
}

func newRecorder() *recorder {
	return &recorder{live: map[multicluster.ClusterName]map[string]context.Context{}, count: map[string]int{}}
}

func (r *recorder) engage(ctx context.Context, replica string, name multicluster.ClusterName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.live[name] == nil {
		r.live[name] = map[string]context.Context{}
	}
	// A context that has ended is a finished engagement: cancellation reaches every Aware's
	// context synchronously, before the old owner releases the cluster's Lease.
	for other, otherCtx := range r.live[name] {
		if other != replica && otherCtx.Err() == nil {
			r.overlaps = append(r.overlaps, fmt.Sprintf("cluster %q engaged on %s while still engaged on %s", name, replica, other))
		}
	}
	r.live[name][replica] = ctx
	r.count[replica+"/"+string(name)]++
}

// owners returns the replicas currently engaged with each cluster.
func (r *recorder) owners() map[multicluster.ClusterName][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[multicluster.ClusterName][]string{}
	for name, byReplica := range r.live {
		for replica, ctx := range byReplica {
			if ctx.Err() == nil {
				out[name] = append(out[name], replica)
			}
		}
		slices.Sort(out[name])
	}
	return out
}

func (r *recorder) ownedBy(replica string) []multicluster.ClusterName {
	var names []multicluster.ClusterName
	for name, rs := range r.owners() {
		if slices.Contains(rs, replica) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

func (r *recorder) engagements(replica string, name multicluster.ClusterName) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.count[replica+"/"+string(name)]
}

func (r *recorder) overlapsSeen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.overlaps)
}

// probe is an Aware runnable that reports its engagements to a recorder.
type probe struct {
	replica string
	rec     *recorder
}

func (p *probe) Engage(ctx context.Context, name multicluster.ClusterName, _ cluster.Cluster) error {
	p.rec.engage(ctx, p.replica, name)
	return nil
}

func (p *probe) Start(ctx context.Context) error { <-ctx.Done(); return nil }

// testProvider offers many logically distinct clusters backed by the two fleet members "a"
// and "b", as every replica's provider would offer the same fleet.
type testProvider struct {
	backing []cluster.Cluster

	mu      sync.Mutex
	ctx     context.Context // nil until Start
	aware   multicluster.Aware
	offered map[multicluster.ClusterName]context.CancelFunc
}

func newTestProvider(t testing.TB, names []multicluster.ClusterName) *testProvider {
	t.Helper()
	p := &testProvider{offered: map[multicluster.ClusterName]context.CancelFunc{}}
	for _, member := range []string{"a", "b"} {
		cl, err := cluster.New(fleet.Member(member).Config())
		if err != nil {
			t.Fatal(err)
		}
		p.backing = append(p.backing, cl)
	}
	for _, n := range names {
		p.offered[n] = nil
	}
	return p
}

func (p *testProvider) backingFor(name multicluster.ClusterName) cluster.Cluster {
	return p.backing[len(name)%len(p.backing)]
}

func (p *testProvider) Start(ctx context.Context, aware multicluster.Aware) error {
	var wg sync.WaitGroup
	for _, cl := range p.backing {
		wg.Go(func() { _ = cl.Start(ctx) })
		cl.GetCache().WaitForCacheSync(ctx)
	}
	p.mu.Lock()
	p.ctx, p.aware = ctx, aware
	var names []multicluster.ClusterName
	for n := range p.offered {
		names = append(names, n)
	}
	p.mu.Unlock()
	for _, n := range names {
		p.add(n)
	}
	<-ctx.Done()
	wg.Wait()
	return nil
}

// add offers a cluster (again); before Start it is offered when Start runs.
func (p *testProvider) add(name multicluster.ClusterName) {
	p.mu.Lock()
	if p.ctx == nil {
		p.offered[name] = nil
		p.mu.Unlock()
		return
	}
	if cancel := p.offered[name]; cancel != nil {
		cancel()
	}
	ctx, cancel := context.WithCancel(p.ctx)
	p.offered[name] = cancel
	aware := p.aware
	p.mu.Unlock()
	_ = aware.Engage(ctx, name, p.backingFor(name)) // only fails once the manager stops
}

func (p *testProvider) remove(name multicluster.ClusterName) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if cancel := p.offered[name]; cancel != nil {
		cancel()
	}
	delete(p.offered, name)
}

func (p *testProvider) Get(_ context.Context, name multicluster.ClusterName) (cluster.Cluster, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.offered[name]; !ok {
		return nil, fmt.Errorf("cluster %q: %w", name, multicluster.ErrClusterNotFound)
	}
	return p.backingFor(name), nil
}

func (p *testProvider) IndexField(ctx context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	var errs []error
	for _, cl := range p.backing {
		errs = append(errs, cl.GetFieldIndexer().IndexField(ctx, obj, field, extract))
	}
	return errors.Join(errs...)
}

// cuttable fails every request while cut is set: a replica cut off from the host cluster.
type cuttable struct {
	cut  *atomic.Bool
	next http.RoundTripper
}

func (c *cuttable) RoundTrip(req *http.Request) (*http.Response, error) {
	if c.cut.Load() {
		return nil, errors.New("injected partition")
	}
	return c.next.RoundTrip(req)
}

// replica is one manager of the group.
type replica struct {
	id       string
	mgr      mcmanager.Manager
	provider *testProvider
	cut      atomic.Bool
	cancel   context.CancelFunc
	done     chan error
}

// group is the replicas of one test, sharing a namespace of the host cluster.
type group struct {
	t        testing.TB
	ns       string
	name     string
	rec      *recorder
	names    []multicluster.ClusterName
	replicas map[string]*replica
	host     kubernetes.Interface
}

var namespaceSeq atomic.Int32

// newGroup creates a namespace for the test's Leases and n cluster names. Every test ends by
// checking that no cluster was ever engaged on two replicas at once.
func newGroup(t testing.TB, n int) *group {
	t.Helper()
	host, err := kubernetes.NewForConfig(fleet.Member("host").Config())
	if err != nil {
		t.Fatal(err)
	}
	ns := fmt.Sprintf("sharding-%d", namespaceSeq.Add(1))
	if _, err := host.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	g := &group{t: t, ns: ns, name: "test-" + ns, rec: newRecorder(), replicas: map[string]*replica{}, host: host}
	for i := range n {
		g.names = append(g.names, multicluster.ClusterName(fmt.Sprintf("cluster-%02d", i)))
	}
	t.Cleanup(func() {
		for _, o := range g.rec.overlapsSeen() {
			t.Errorf("overlap: %s", o)
		}
	})
	return g
}

func (g *group) options(id string, cut *atomic.Bool) sharding.Options {
	cfg := rest.CopyConfig(fleet.Member("host").Config())
	cfg.QPS, cfg.Burst = 20, 30 // what ctrl.GetConfig sets
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return &cuttable{cut: cut, next: rt} }
	return sharding.Options{
		Group: g.name, Namespace: g.ns, Identity: id, Config: cfg, Logger: testLogger(),
		LeaseDuration: testLeaseDuration, RetryPeriod: testRetryPeriod,
	}
}

// start starts a replica whose provider offers the group's clusters; its Awares are a probe
// reporting to the group's recorder, then extra.
func (g *group) start(id string, extra ...mcmanager.Runnable) *replica {
	g.t.Helper()
	r := &replica{id: id, provider: newTestProvider(g.t, g.names), done: make(chan error, 1)}
	mgr, err := mcmanager.New(fleet.Member("host").Config(), r.provider, mcmanager.Options{
		Metrics: metricsserver.Options{BindAddress: "0"},
		Logger:  testLogger(),
	}, mcmanager.WithSharding(g.options(id, &r.cut)))
	if err != nil {
		g.t.Fatal(err)
	}
	r.mgr = mgr
	for _, aware := range append([]mcmanager.Runnable{&probe{replica: id, rec: g.rec}}, extra...) {
		if err := mgr.Add(aware); err != nil {
			g.t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { r.done <- mgr.Start(ctx) }()
	g.replicas[id] = r
	g.t.Cleanup(func() { g.stop(id) })
	return r
}

// stop stops a replica gracefully and waits for its manager to return.
func (g *group) stop(id string) {
	r := g.replicas[id]
	if r == nil {
		return
	}
	delete(g.replicas, id)
	r.cancel()
	select {
	case err := <-r.done:
		if err != nil {
			g.t.Errorf("replica %s: %v", id, err)
		}
	case <-time.After(settleTimeout):
		g.t.Errorf("replica %s did not stop", id)
	}
}

func (g *group) addCluster(name multicluster.ClusterName) {
	g.names = append(g.names, name)
	for _, r := range g.replicas {
		r.provider.add(name)
	}
}

func (g *group) removeCluster(name multicluster.ClusterName) {
	g.names = slices.DeleteFunc(g.names, func(n multicluster.ClusterName) bool { return n == name })
	for _, r := range g.replicas {
		r.provider.remove(name)
	}
}

// expected returns the owner of every cluster when exactly the given replicas are live.
func (g *group) expected(live ...string) map[multicluster.ClusterName]string {
	var peers []sharding.Peer
	for _, id := range live {
		peers = append(peers, sharding.Peer{ID: id, Weight: 1})
	}
	want := map[multicluster.ClusterName]string{}
	for _, n := range g.names {
		p, _ := sharding.Owner(n, peers)
		want[n] = p.ID
	}
	return want
}

// waitSettled waits until every cluster is engaged on exactly the replica that owns it among
// live, and nothing else is engaged. It returns how long that took.
func (g *group) waitSettled(live ...string) time.Duration {
	g.t.Helper()
	start := time.Now()
	want := g.expected(live...)
	var last string
	for time.Since(start) < settleTimeout {
		last = ""
		owners := g.rec.owners()
		for _, n := range g.names {
			if got := owners[n]; len(got) != 1 || got[0] != want[n] {
				last = fmt.Sprintf("cluster %q engaged on %v, want [%s]", n, got, want[n])
				break
			}
		}
		for n, got := range owners {
			if _, offered := want[n]; !offered && len(got) > 0 && last == "" {
				last = fmt.Sprintf("cluster %q is not offered but engaged on %v", n, got)
			}
		}
		if last == "" {
			return time.Since(start)
		}
		time.Sleep(20 * time.Millisecond)
	}
	g.t.Fatalf("ownership did not settle on %v within %v: %s", live, settleTimeout, last)
	return 0
}

// leases returns the group's Leases by role.
func (g *group) leases(role string) map[string]string {
	g.t.Helper()
	list, err := g.host.CoordinationV1().Leases(g.ns).List(context.Background(), metav1.ListOptions{LabelSelector: sharding.LabelRole + "=" + role})
	if err != nil {
		g.t.Fatal(err)
	}
	holders := map[string]string{} // cluster (or identity) → holder
	for _, l := range list.Items {
		key := l.Annotations[sharding.AnnotationCluster]
		if role == sharding.RoleMember {
			key = l.Annotations[sharding.AnnotationIdentity]
		}
		holder := ""
		if l.Spec.HolderIdentity != nil {
			holder = *l.Spec.HolderIdentity
		}
		holders[key] = holder
	}
	return holders
}
