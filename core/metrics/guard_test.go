// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package metrics

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"mcr.dev/core/multicluster"
)

// testGuard returns a guard over vectors of its own registry, and a function that lists the
// series of the named vector ("reconcile_total", "reconcile_duration", "queue_wait",
// "breaker_state", "breaker_transitions") as "controller/cluster[/third label] value", the
// value of a histogram being its sample count.
func testGuard(t testing.TB, opts ClusterSeriesOptions) (*clusterGuard, func(vec string) []string) {
	t.Helper()
	reg := prometheus.NewRegistry()
	pair := []string{"controller", "cluster"}
	vecs := clusterVecs{
		reconcileTotal:     prometheus.NewCounterVec(prometheus.CounterOpts{Name: "reconcile_total"}, append(pair, "result")),
		reconcileDuration:  prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "reconcile_duration", Buckets: latencyBuckets}, pair),
		queueWait:          prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "queue_wait", Buckets: latencyBuckets}, pair),
		breakerState:       prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "breaker_state"}, append(pair, "state")),
		breakerTransitions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "breaker_transitions"}, append(pair, "state")),
	}
	reg.MustRegister(vecs.reconcileTotal, vecs.reconcileDuration, vecs.queueWait, vecs.breakerState, vecs.breakerTransitions)
	series := func(vec string) []string {
		families, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range families {
			if f.GetName() != vec {
				continue
			}
			for _, m := range f.GetMetric() {
				got = append(got, seriesName(m))
			}
		}
		slices.Sort(got)
		return got
	}
	return newClusterGuard(opts.withDefaults(), vecs), series
}

func seriesName(m *dto.Metric) string {
	labels := map[string]string{}
	for _, l := range m.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	name := labels["controller"] + "/" + labels["cluster"]
	if third := labels["result"] + labels["state"]; third != "" {
		name += "/" + third
	}
	var v float64
	switch {
	case m.Histogram != nil:
		v = float64(m.GetHistogram().GetSampleCount())
	case m.Counter != nil:
		v = m.GetCounter().GetValue()
	case m.Gauge != nil:
		v = m.GetGauge().GetValue()
	}
	return fmt.Sprintf("%s %g", name, v)
}

// observeFor records one observation of the histogram as the exported functions do.
func (g *clusterGuard) observeFor(id clusterSeries, controller string, cluster multicluster.ClusterName) {
	if g.enabled.Load() {
		g.observe(g.slot(controller, cluster), id, time.Millisecond)
	}
}

func cluster(i int) multicluster.ClusterName { return multicluster.ClusterName(fmt.Sprint("c", i)) }

func TestLatencySeriesBoundedPerController(t *testing.T) {
	g, series := testGuard(t, ClusterSeriesOptions{MaxClusters: 3})
	for i := range 10 {
		g.observeFor(reconcileDuration, "ctrl", cluster(i))
	}
	g.observeFor(reconcileDuration, "ctrl", cluster(9))
	g.observeFor(reconcileDuration, "other-ctrl", cluster(9))

	want := []string{"ctrl/_other 8", "ctrl/c0 1", "ctrl/c1 1", "ctrl/c2 1", "other-ctrl/c9 1"}
	if got := series("reconcile_duration"); !slices.Equal(got, want) {
		t.Fatalf("series = %q\nwant     %q", got, want)
	}
	if got := series("queue_wait"); len(got) != 0 {
		t.Fatalf("queue wait series %q before any queue wait was observed", got)
	}
	// The other histogram labels clusters as the first did.
	g.observeFor(queueWait, "ctrl", cluster(5))
	g.observeFor(queueWait, "ctrl", cluster(1))
	if got, want := series("queue_wait"), []string{"ctrl/_other 1", "ctrl/c1 1"}; !slices.Equal(got, want) {
		t.Fatalf("queue wait series = %q, want %q", got, want)
	}
}

func TestForgetDeletesSeriesAndFreesPlace(t *testing.T) {
	g, series := testGuard(t, ClusterSeriesOptions{MaxClusters: 2})
	for i := range 4 {
		g.observeFor(reconcileDuration, "ctrl", cluster(i))
		g.observeFor(queueWait, "ctrl", cluster(i))
	}
	g.forget(cluster(0))
	for _, h := range []string{"reconcile_duration", "queue_wait"} {
		if got, want := series(h), []string{"ctrl/_other 2", "ctrl/c1 1"}; !slices.Equal(got, want) {
			t.Fatalf("series of %s after forgetting c0 = %q, want %q", h, got, want)
		}
	}
	// c3 counted among the others so far; the free place goes to the first cluster observed.
	g.observeFor(reconcileDuration, "ctrl", cluster(3))
	g.observeFor(reconcileDuration, "ctrl", cluster(2))
	if got, want := series("reconcile_duration"), []string{"ctrl/_other 3", "ctrl/c1 1", "ctrl/c3 1"}; !slices.Equal(got, want) {
		t.Fatalf("series = %q, want %q", got, want)
	}
	// Forgetting a cluster counted among the others leaves the aggregate alone.
	g.forget(cluster(2))
	if got, want := series("reconcile_duration"), []string{"ctrl/_other 3", "ctrl/c1 1", "ctrl/c3 1"}; !slices.Equal(got, want) {
		t.Fatalf("series after forgetting c2 = %q, want %q", got, want)
	}
}

func TestForgottenSlotCreatesNoSeries(t *testing.T) {
	g, series := testGuard(t, ClusterSeriesOptions{})
	// A worker looked the slot up just before the cluster was forgotten.
	s := g.slot("ctrl", "gone")
	g.forget("gone")
	if o := g.handle(s, queueWait); o != nil {
		t.Fatal("a forgotten slot created a series")
	}
	if got := series("queue_wait"); len(got) != 0 {
		t.Fatalf("series %q after the cluster was forgotten", got)
	}
}

// A reconcile that ends after its cluster was disengaged does not bring the cluster's series
// back; engaging the cluster again, or time, does.
func TestForgottenClusterStaysUnrecorded(t *testing.T) {
	g, series := testGuard(t, ClusterSeriesOptions{})
	now := time.Now()
	g.now = func() time.Time { return now }
	g.observeFor(reconcileDuration, "ctrl", "a")
	g.breakerTransition("ctrl", "a", BreakerOpen)
	g.forget("a")
	g.observeFor(reconcileDuration, "ctrl", "a")
	g.observeFor(reconcileDuration, "other-ctrl", "a")
	g.breakerTransition("ctrl", "a", BreakerClosed)
	for _, vec := range []string{"reconcile_duration", "breaker_state", "breaker_transitions"} {
		if got := series(vec); len(got) != 0 {
			t.Fatalf("%s series %q recorded for a forgotten cluster", vec, got)
		}
	}
	g.remember("a")
	g.observeFor(reconcileDuration, "ctrl", "a")
	if got, want := series("reconcile_duration"), []string{"ctrl/a 1"}; !slices.Equal(got, want) {
		t.Fatalf("series after the cluster was engaged again = %q, want %q", got, want)
	}

	g.forget("b")
	now = now.Add(departedFor)
	g.observeFor(reconcileDuration, "ctrl", "b")
	if got, want := series("reconcile_duration"), []string{"ctrl/a 1", "ctrl/b 1"}; !slices.Equal(got, want) {
		t.Fatalf("series %s after a forgotten cluster's time ran out = %q, want %q", departedFor, got, want)
	}
	g.forget("c")
	now = now.Add(departedFor)
	g.forget("d")
	if _, ok := g.departed["c"]; ok {
		t.Fatal("a forgotten cluster whose time ran out is still held")
	}
}

func TestSeriesOff(t *testing.T) {
	g, series := testGuard(t, ClusterSeriesOptions{MaxClusters: -1})
	g.observeFor(reconcileDuration, "ctrl", "a")
	g.breakerTransition("ctrl", "a", BreakerOpen)
	for _, vec := range []string{"reconcile_duration", "breaker_state", "breaker_transitions"} {
		if got := series(vec); len(got) != 0 {
			t.Fatalf("%s series %q with the per-cluster series off", vec, got)
		}
	}
	// Raising the limit lets clusters counted among the others have their own place.
	g.configure(ClusterSeriesOptions{MaxClusters: 1})
	g.observeFor(reconcileDuration, "ctrl", "a")
	g.observeFor(reconcileDuration, "ctrl", "b")
	g.configure(ClusterSeriesOptions{MaxClusters: 2})
	g.observeFor(reconcileDuration, "ctrl", "b")
	if got, want := series("reconcile_duration"), []string{"ctrl/_other 1", "ctrl/a 1", "ctrl/b 1"}; !slices.Equal(got, want) {
		t.Fatalf("series = %q, want %q", got, want)
	}
}

// The exported functions record in the vectors registered with controller-runtime's registry,
// and ForgetCluster deletes every series of the cluster.
func TestObserveAndForgetCluster(t *testing.T) {
	controller := t.Name()
	ObserveReconcile(controller, "kept", ResultSuccess, 2*time.Second)
	ObserveQueueWait(controller, "kept", time.Second)
	ObserveReconcile(controller, "gone", ResultError, time.Second)
	ObserveQueueWait(controller, "gone", time.Second)
	BreakerTransition(controller, "gone", BreakerOpen)

	count := func(family, cluster string) int {
		families, err := ctrlmetrics.Registry.Gather()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, f := range families {
			if f.GetName() != family {
				continue
			}
			for _, m := range f.GetMetric() {
				labels := map[string]string{}
				for _, l := range m.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				if labels["controller"] == controller && labels["cluster"] == cluster {
					n++
				}
			}
		}
		return n
	}
	perCluster := map[string]int{
		"mcr_reconcile_duration_seconds": 1, "mcr_queue_wait_seconds": 1, "mcr_reconcile_total": 1,
		"mcr_cluster_breaker_state": 3, "mcr_cluster_breaker_transitions_total": 1,
	}
	for family, want := range perCluster {
		if n := count(family, "gone"); n != want {
			t.Fatalf("%s: %d series of cluster gone, want %d", family, n, want)
		}
	}
	ForgetCluster("gone")
	for family := range perCluster {
		if n := count(family, "gone"); n != 0 {
			t.Errorf("%s: %d series of cluster gone after ForgetCluster, want 0", family, n)
		}
	}
	if count("mcr_reconcile_duration_seconds", "kept") != 1 || count("mcr_queue_wait_seconds", "kept") != 1 || count("mcr_reconcile_total", "kept") != 1 {
		t.Error("ForgetCluster deleted the series of another cluster")
	}
}

// Every per-cluster series is under the one guard: the clusters with places of their own are
// the same in all of them, and the others are recorded under OtherClusters in all of them.
func TestEveryClusterSeriesObeysTheGuard(t *testing.T) {
	g, series := testGuard(t, ClusterSeriesOptions{MaxClusters: 2})
	for i := range 4 {
		s := g.slot("ctrl", cluster(i))
		g.observe(s, reconcileDuration, time.Millisecond)
		g.inc(s, resultSeries(ResultSuccess))
		g.observe(s, queueWait, time.Millisecond)
		g.breakerTransition("ctrl", cluster(i), BreakerOpen)
	}
	for vec, want := range map[string][]string{
		"reconcile_duration":  {"ctrl/_other 2", "ctrl/c0 1", "ctrl/c1 1"},
		"queue_wait":          {"ctrl/_other 2", "ctrl/c0 1", "ctrl/c1 1"},
		"reconcile_total":     {"ctrl/_other/success 2", "ctrl/c0/success 1", "ctrl/c1/success 1"},
		"breaker_transitions": {"ctrl/_other/open 2", "ctrl/c0/open 1", "ctrl/c1/open 1"},
		"breaker_state": {
			"ctrl/_other/closed 0", "ctrl/_other/half_open 0", "ctrl/_other/open 2",
			"ctrl/c0/closed 0", "ctrl/c0/half_open 0", "ctrl/c0/open 1",
			"ctrl/c1/closed 0", "ctrl/c1/half_open 0", "ctrl/c1/open 1",
		},
	} {
		if got := series(vec); !slices.Equal(got, want) {
			t.Errorf("%s series = %q\nwant %q", vec, got, want)
		}
	}
	// An unknown result is counted as an error rather than creating a label value.
	g.inc(g.slot("ctrl", cluster(0)), resultSeries("bogus"))
	if got := series("reconcile_total"); !slices.Contains(got, "ctrl/c0/error 1") {
		t.Errorf("reconcile_total series = %q, want ctrl/c0/error 1", got)
	}
}

// The breaker state is one series per state: 1 for the current one and 0 for the others for a
// cluster of its own, the number of clusters in each state under OtherClusters; a cluster that
// leaves takes its state out of the count.
func TestBreakerStateSeries(t *testing.T) {
	g, series := testGuard(t, ClusterSeriesOptions{MaxClusters: 1})
	check := func(want ...string) {
		t.Helper()
		if got := series("breaker_state"); !slices.Equal(got, want) {
			t.Fatalf("breaker_state series = %q\nwant %q", got, want)
		}
	}
	g.breakerTransition("ctrl", "own", BreakerOpen)
	g.breakerTransition("ctrl", "own", BreakerHalfOpen)
	g.breakerTransition("ctrl", "x", BreakerOpen)
	g.breakerTransition("ctrl", "y", BreakerOpen)
	check("ctrl/_other/closed 0", "ctrl/_other/half_open 0", "ctrl/_other/open 2",
		"ctrl/own/closed 0", "ctrl/own/half_open 1", "ctrl/own/open 0")

	g.breakerTransition("ctrl", "x", BreakerHalfOpen)
	g.breakerTransition("ctrl", "x", BreakerClosed)
	g.breakerTransition("ctrl", "own", BreakerClosed)
	check("ctrl/_other/closed 1", "ctrl/_other/half_open 0", "ctrl/_other/open 1",
		"ctrl/own/closed 1", "ctrl/own/half_open 0", "ctrl/own/open 0")

	// y leaves: it is no longer counted. own leaves: its series go, and its place is free.
	g.forget("y")
	g.forget("own")
	check("ctrl/_other/closed 1", "ctrl/_other/half_open 0", "ctrl/_other/open 0")
	// x takes the free place at its next transition, and leaves the count of the others.
	g.breakerTransition("ctrl", "x", BreakerOpen)
	check("ctrl/_other/closed 0", "ctrl/_other/half_open 0", "ctrl/_other/open 0",
		"ctrl/x/closed 0", "ctrl/x/half_open 0", "ctrl/x/open 1")
}

func TestClusterSeriesOptionsDefaults(t *testing.T) {
	if got := (ClusterSeriesOptions{}).withDefaults().MaxClusters; got != 100 {
		t.Fatalf("default MaxClusters = %d, want 100", got)
	}
	if got := (ClusterSeriesOptions{MaxClusters: -1}).withDefaults().MaxClusters; got != -1 {
		t.Fatalf("MaxClusters -1 became %d, want it kept (off)", got)
	}
}

// BenchmarkObserve measures one observation: with the histograms off, for a cluster with series
// of its own, for a cluster counted among the others, and the same from 4 goroutines at once.
func BenchmarkObserve(b *testing.B) {
	const clusters = 64
	names := make([]multicluster.ClusterName, clusters)
	for i := range names {
		names[i] = cluster(i)
	}
	for _, bc := range []struct {
		name string
		max  int
	}{{"off", -1}, {"own", clusters}, {"other", 1}} {
		b.Run(bc.name, func(b *testing.B) {
			g, _ := testGuard(b, ClusterSeriesOptions{MaxClusters: bc.max})
			for _, n := range names {
				g.observeFor(reconcileDuration, "ctrl", n)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				g.observeFor(reconcileDuration, "ctrl", names[i%clusters])
			}
		})
		b.Run(bc.name+"/parallel", func(b *testing.B) {
			g, _ := testGuard(b, ClusterSeriesOptions{MaxClusters: bc.max})
			for _, n := range names {
				g.observeFor(reconcileDuration, "ctrl", n)
			}
			b.ReportAllocs()
			b.SetParallelism(2) // 2 × GOMAXPROCS goroutines
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					g.observeFor(reconcileDuration, "ctrl", names[i%clusters])
					i++
				}
			})
		})
	}
}
