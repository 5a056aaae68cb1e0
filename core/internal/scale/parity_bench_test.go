// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package scale

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	upstreambuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	upstreammanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	upstreamreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"
	upstreamclusters "sigs.k8s.io/multicluster-runtime/providers/clusters"

	mcbuilder "mcr.dev/core/builder"
	"mcr.dev/core/envtest"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/clusters"
	mcreconcile "mcr.dev/core/reconcile"
)

// parityObjects is the default size of the bursts of BenchmarkSingleClusterParity.
const parityObjects = 2000

// BenchmarkSingleClusterParity runs the same trivial ConfigMap controller on one cluster with
// plain controller-runtime, with mcr (the local cluster engaged, or one provider cluster), and
// with multicluster-runtime v0.24.1, through two bursts of parityObjects ConfigMaps:
//   - list: the ConfigMaps exist before the controller starts, so they arrive in one initial
//     list; list-start-to-last-ms runs from creating the manager to the last reconcile (start-up,
//     list and sync included), list-first-to-last-ms from the first reconcile to the last, and
//     list-objects/s is the burst over that span;
//   - watch: the ConfigMaps are created by 8 writers while the controller runs, and each is timed
//     from just before its Create to its reconcile (watch-p50-ms, watch-p99-ms), the throughput
//     (watch-objects/s) from the first Create to the last reconcile.
//
// Every variant caches the same two namespaces and runs one worker. Run it with -count 5 and
// compare medians: a single run on a shared machine says little. MCR_PARITY_OBJECTS changes the
// size of the bursts, e.g. to 20000 for a CPU profile with enough samples of the reconcile path.
func BenchmarkSingleClusterParity(b *testing.B) {
	m := apiservers(b, 1)[0]
	objects := parityObjects
	if v := os.Getenv("MCR_PARITY_OBJECTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("MCR_PARITY_OBJECTS=%q: want a positive number", v)
		}
		objects = n
	}
	for _, v := range parityVariants {
		b.Run(v.name, func(b *testing.B) {
			var sum parityResult
			for range b.N {
				sum.add(runParity(b, m, v, objects))
			}
			runs := float64(b.N)
			b.ReportMetric(sum.listStartToLast.Seconds()*1000/runs, "list-start-to-last-ms")
			b.ReportMetric(sum.listFirstToLast.Seconds()*1000/runs, "list-first-to-last-ms")
			b.ReportMetric(sum.listPerSecond/runs, "list-objects/s")
			b.ReportMetric(sum.watchPerSecond/runs, "watch-objects/s")
			b.ReportMetric(sum.watchP50.Seconds()*1000/runs, "watch-p50-ms")
			b.ReportMetric(sum.watchP99.Seconds()*1000/runs, "watch-p99-ms")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// TestParityVariants runs every variant of BenchmarkSingleClusterParity on a small burst, so that
// each of them is known to reconcile every object exactly as the benchmark counts it.
func TestParityVariants(t *testing.T) {
	m := apiservers(t, 1)[0]
	for _, v := range parityVariants {
		t.Run(v.name, func(t *testing.T) {
			r := runParity(t, m, v, 20)
			if r.listFirstToLast <= 0 || r.watchP50 <= 0 || r.watchP99 < r.watchP50 {
				t.Errorf("implausible figures: %+v", r)
			}
		})
	}
}

type parityResult struct {
	listStartToLast            time.Duration
	listFirstToLast            time.Duration
	listPerSecond              float64
	watchPerSecond             float64
	watchP50, watchP99         time.Duration
	watchFirstSentToLastSeenAt time.Duration
}

func (s *parityResult) add(r parityResult) {
	s.listStartToLast += r.listStartToLast
	s.listFirstToLast += r.listFirstToLast
	s.listPerSecond += r.listPerSecond
	s.watchPerSecond += r.watchPerSecond
	s.watchP50 += r.watchP50
	s.watchP99 += r.watchP99
	s.watchFirstSentToLastSeenAt += r.watchFirstSentToLastSeenAt
}

// parityRecorder notes when each ConfigMap of the two bursts is first reconciled. ConfigMaps
// are named cm-<index>.
type parityRecorder struct {
	controller      string // unique per run: controller names are global to the process
	listNS, watchNS string
	list, watch     *burst
}

type burst struct {
	seen  []atomic.Int64 // unix nanoseconds of the first reconcile, 0 until then
	count atomic.Int64
	done  chan struct{}
}

func newBurst(n int) *burst {
	return &burst{seen: make([]atomic.Int64, n), done: make(chan struct{})}
}

func (b *burst) observe(name string, now int64) {
	i, err := strconv.Atoi(strings.TrimPrefix(name, "cm-"))
	if err != nil || i < 0 || i >= len(b.seen) || !b.seen[i].CompareAndSwap(0, now) {
		return
	}
	if b.count.Add(1) == int64(len(b.seen)) {
		close(b.done)
	}
}

func (r *parityRecorder) observe(namespace, name string) {
	now := time.Now().UnixNano()
	switch namespace {
	case r.listNS:
		r.list.observe(name, now)
	case r.watchNS:
		r.watch.observe(name, now)
	}
}

// parityVariant starts a manager running the controller on cfg, caching only namespaces, and
// returns a function that stops it.
type parityVariant struct {
	name  string
	start func(tb testing.TB, cfg *rest.Config, namespaces []string, rec *parityRecorder) (stop func())
}

var parityVariants = []parityVariant{
	{"controller-runtime", startControllerRuntime},
	{"mcr-local", startMCRLocal},
	{"mcr-provider", startMCRProvider},
	{"multicluster-runtime", startUpstream},
}

func parityManagerOptions(namespaces []string) manager.Options {
	defaults := map[string]cache.Config{}
	for _, ns := range namespaces {
		defaults[ns] = cache.Config{}
	}
	return manager.Options{
		Logger:                 logr.Discard(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{DefaultNamespaces: defaults},
	}
}

// parityCluster is the cluster the provider variants engage: the same apiserver and cache
// options as the manager of the other variants.
func parityCluster(tb testing.TB, cfg *rest.Config, namespaces []string) cluster.Cluster {
	tb.Helper()
	opts := parityManagerOptions(namespaces)
	cl, err := cluster.New(cfg, func(o *cluster.Options) {
		o.Logger = logr.Discard()
		o.Cache = opts.Cache
	})
	if err != nil {
		tb.Fatalf("creating the cluster: %v", err)
	}
	return cl
}

func startControllerRuntime(tb testing.TB, cfg *rest.Config, namespaces []string, rec *parityRecorder) func() {
	tb.Helper()
	mgr, err := manager.New(cfg, parityManagerOptions(namespaces))
	if err != nil {
		tb.Fatalf("creating manager: %v", err)
	}
	err = builder.ControllerManagedBy(mgr).Named(rec.controller).For(&corev1.ConfigMap{}).
		Complete(reconcile.Func(func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
			rec.observe(req.Namespace, req.Name)
			return reconcile.Result{}, nil
		}))
	if err != nil {
		tb.Fatalf("building the controller: %v", err)
	}
	return run(tb, mgr.Start)
}

func startMCRLocal(tb testing.TB, cfg *rest.Config, namespaces []string, rec *parityRecorder) func() {
	tb.Helper()
	return startMCR(tb, cfg, nil, namespaces, rec, mcbuilder.WithEngageWithLocalCluster(true))
}

func startMCRProvider(tb testing.TB, cfg *rest.Config, namespaces []string, rec *parityRecorder) func() {
	tb.Helper()
	provider := clusters.New(clusters.Options{Logger: logr.Discard()})
	// Parked until the manager starts the provider.
	if err := provider.Add(context.Background(), "member", parityCluster(tb, cfg, namespaces)); err != nil {
		tb.Fatal(err)
	}
	return startMCR(tb, cfg, provider, namespaces, rec)
}

// startMCR runs the mcr variants' controller with provider (nil: the local cluster only).
func startMCR(tb testing.TB, cfg *rest.Config, provider multicluster.Provider, namespaces []string, rec *parityRecorder, opts ...mcbuilder.ForOption) func() {
	tb.Helper()
	mgr, err := mcmanager.New(cfg, provider, parityManagerOptions(namespaces))
	if err != nil {
		tb.Fatalf("creating manager: %v", err)
	}
	err = mcbuilder.ControllerManagedBy(mgr).Named(rec.controller).For(&corev1.ConfigMap{}, opts...).
		Complete(mcreconcile.Func(func(_ context.Context, req mcreconcile.Request) (reconcile.Result, error) {
			rec.observe(req.Namespace, req.Name)
			return reconcile.Result{}, nil
		}))
	if err != nil {
		tb.Fatalf("building the controller: %v", err)
	}
	return run(tb, mgr.Start)
}

func startUpstream(tb testing.TB, cfg *rest.Config, namespaces []string, rec *parityRecorder) func() {
	tb.Helper()
	provider := upstreamclusters.New()
	// Queued until the manager starts the provider.
	if err := provider.Add(context.Background(), "member", parityCluster(tb, cfg, namespaces)); err != nil {
		tb.Fatal(err)
	}
	mgr, err := upstreammanager.New(cfg, provider, parityManagerOptions(namespaces))
	if err != nil {
		tb.Fatalf("creating manager: %v", err)
	}
	err = upstreambuilder.ControllerManagedBy(mgr).Named(rec.controller).For(&corev1.ConfigMap{}).
		Complete(upstreamreconcile.Func(func(_ context.Context, req upstreamreconcile.Request) (reconcile.Result, error) {
			rec.observe(req.Namespace, req.Name)
			return reconcile.Result{}, nil
		}))
	if err != nil {
		tb.Fatalf("building the controller: %v", err)
	}
	return run(tb, mgr.Start)
}

// run starts a manager and returns a function that stops it and reports how it ended.
func run(tb testing.TB, start func(context.Context) error) func() {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- start(ctx) }()
	return func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				tb.Errorf("manager: %v", err)
			}
		case <-time.After(time.Minute):
			tb.Errorf("manager did not stop within a minute")
		}
	}
}

var (
	parityListMu sync.Mutex
	parityLists  = map[int]string{} // objects → namespace holding that many ConfigMaps
	parityRuns   atomic.Int64
)

// parityListNamespace returns a namespace holding objects ConfigMaps, created on first use.
func parityListNamespace(tb testing.TB, m *envtest.Member, objects int) string {
	tb.Helper()
	parityListMu.Lock()
	defer parityListMu.Unlock()
	if ns, ok := parityLists[objects]; ok {
		return ns
	}
	ns := fmt.Sprintf("parity-list-%d", objects)
	c, closeIdle := adminClient(tb, m)
	defer closeIdle()
	if err := c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		tb.Fatalf("creating namespace %s: %v", ns, err)
	}
	createConfigMaps(tb, c, ns, objects, nil)
	parityLists[objects] = ns
	return ns
}

// createConfigMaps creates ConfigMaps cm-0 … cm-<n-1> in ns, 8 at a time, and notes in sent
// (if not nil) when each Create was sent.
func createConfigMaps(tb testing.TB, c client.Client, ns string, n int, sent []time.Time) {
	tb.Helper()
	ctx := context.Background()
	const writers = 8
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := w; i < n && errs[w] == nil; i += writers {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm-" + strconv.Itoa(i)}}
				if sent != nil {
					sent[i] = time.Now()
				}
				errs[w] = c.Create(ctx, cm)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			tb.Fatalf("creating ConfigMaps in %s: %v", ns, err)
		}
	}
}

// runParity runs one variant through the list burst and the watch burst of objects ConfigMaps.
func runParity(tb testing.TB, m *envtest.Member, v parityVariant, objects int) parityResult {
	tb.Helper()
	listNS := parityListNamespace(tb, m, objects)
	id := parityRuns.Add(1)
	watchNS := fmt.Sprintf("parity-watch-%d-%d", time.Now().UnixNano()%100000, id)
	rec := &parityRecorder{
		controller: fmt.Sprintf("parity-%d", id),
		listNS:     listNS, watchNS: watchNS,
		list: newBurst(objects), watch: newBurst(objects),
	}
	c, closeIdle := adminClient(tb, m)
	defer closeIdle()
	// The watch namespace must exist before the cache starts: the cache is limited to it.
	if err := c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: watchNS}}); err != nil {
		tb.Fatalf("creating namespace %s: %v", watchNS, err)
	}
	defer func() {
		// Without a namespace controller the namespace stays; its ConfigMaps need not.
		if err := c.DeleteAllOf(context.Background(), &corev1.ConfigMap{}, client.InNamespace(watchNS)); err != nil {
			tb.Errorf("deleting the ConfigMaps of %s: %v", watchNS, err)
		}
	}()

	start := time.Now()
	stop := v.start(tb, m.Config(), []string{listNS, watchNS}, rec)
	defer stop()
	wait := func(b *burst, what string) {
		select {
		case <-b.done:
		case <-time.After(5 * time.Minute):
			tb.Fatalf("%s: %d of %d ConfigMaps reconciled after 5 minutes", what, b.count.Load(), objects)
		}
	}
	wait(rec.list, "list burst")

	var r parityResult
	first, last := spanOf(rec.list.seen)
	r.listStartToLast = last.Sub(start)
	r.listFirstToLast = last.Sub(first)
	r.listPerSecond = float64(objects) / max(r.listFirstToLast.Seconds(), 1e-9)

	sent := make([]time.Time, objects)
	createConfigMaps(tb, c, watchNS, objects, sent)
	wait(rec.watch, "watch burst")
	latencies := make([]time.Duration, objects)
	for i := range objects {
		latencies[i] = time.Unix(0, rec.watch.seen[i].Load()).Sub(sent[i])
	}
	slices.Sort(latencies)
	r.watchP50 = latencies[objects/2]
	r.watchP99 = latencies[min(objects-1, objects*99/100)]
	_, lastSeen := spanOf(rec.watch.seen)
	r.watchFirstSentToLastSeenAt = lastSeen.Sub(slices.MinFunc(sent, time.Time.Compare))
	r.watchPerSecond = float64(objects) / max(r.watchFirstSentToLastSeenAt.Seconds(), 1e-9)
	return r
}

func spanOf(seen []atomic.Int64) (first, last time.Time) {
	lo, hi := seen[0].Load(), seen[0].Load()
	for i := range seen {
		v := seen[i].Load()
		lo, hi = min(lo, v), max(hi, v)
	}
	return time.Unix(0, lo), time.Unix(0, hi)
}
