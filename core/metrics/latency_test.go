package metrics

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"mcr.dev/core/multicluster"
)

// testGuard returns a guard over histograms of its own registry, and a function that lists the
// series of histogram h as "controller/cluster count".
func testGuard(t testing.TB, opts ClusterLatencyOptions) (*latencyGuard, func(h histogram) []string) {
	t.Helper()
	reg := prometheus.NewRegistry()
	var vecs [histograms]*prometheus.HistogramVec
	for i := range vecs {
		vecs[i] = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: fmt.Sprint("test_", i), Buckets: latencyBuckets}, []string{"controller", "cluster"})
		reg.MustRegister(vecs[i])
	}
	series := func(h histogram) []string {
		families, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range families {
			if f.GetName() != fmt.Sprint("test_", int(h)) {
				continue
			}
			for _, m := range f.GetMetric() {
				got = append(got, seriesName(m))
			}
		}
		slices.Sort(got)
		return got
	}
	return newLatencyGuard(opts.withDefaults(), vecs), series
}

func seriesName(m *dto.Metric) string {
	labels := map[string]string{}
	for _, l := range m.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	return fmt.Sprintf("%s/%s %d", labels["controller"], labels["cluster"], m.GetHistogram().GetSampleCount())
}

func cluster(i int) multicluster.ClusterName { return multicluster.ClusterName(fmt.Sprint("c", i)) }

func TestLatencySeriesBoundedPerController(t *testing.T) {
	g, series := testGuard(t, ClusterLatencyOptions{MaxClusters: 3})
	for i := range 10 {
		g.observe(reconcileDuration, "ctrl", cluster(i), time.Millisecond)
	}
	g.observe(reconcileDuration, "ctrl", cluster(9), time.Millisecond)
	g.observe(reconcileDuration, "other-ctrl", cluster(9), time.Millisecond)

	want := []string{"ctrl/_other 8", "ctrl/c0 1", "ctrl/c1 1", "ctrl/c2 1", "other-ctrl/c9 1"}
	if got := series(reconcileDuration); !slices.Equal(got, want) {
		t.Fatalf("series = %q\nwant     %q", got, want)
	}
	if got := series(queueWait); len(got) != 0 {
		t.Fatalf("queue wait series %q before any queue wait was observed", got)
	}
	// The other histogram labels clusters as the first did.
	g.observe(queueWait, "ctrl", cluster(5), time.Millisecond)
	g.observe(queueWait, "ctrl", cluster(1), time.Millisecond)
	if got, want := series(queueWait), []string{"ctrl/_other 1", "ctrl/c1 1"}; !slices.Equal(got, want) {
		t.Fatalf("queue wait series = %q, want %q", got, want)
	}
}

func TestForgetDeletesSeriesAndFreesPlace(t *testing.T) {
	g, series := testGuard(t, ClusterLatencyOptions{MaxClusters: 2})
	for i := range 4 {
		g.observe(reconcileDuration, "ctrl", cluster(i), time.Millisecond)
		g.observe(queueWait, "ctrl", cluster(i), time.Millisecond)
	}
	g.forget(cluster(0))
	for _, h := range []histogram{reconcileDuration, queueWait} {
		if got, want := series(h), []string{"ctrl/_other 2", "ctrl/c1 1"}; !slices.Equal(got, want) {
			t.Fatalf("series of histogram %d after forgetting c0 = %q, want %q", h, got, want)
		}
	}
	// c3 counted among the others so far; the free place goes to the first cluster observed.
	g.observe(reconcileDuration, "ctrl", cluster(3), time.Millisecond)
	g.observe(reconcileDuration, "ctrl", cluster(2), time.Millisecond)
	if got, want := series(reconcileDuration), []string{"ctrl/_other 3", "ctrl/c1 1", "ctrl/c3 1"}; !slices.Equal(got, want) {
		t.Fatalf("series = %q, want %q", got, want)
	}
	// Forgetting a cluster counted among the others leaves the aggregate alone.
	g.forget(cluster(2))
	if got, want := series(reconcileDuration), []string{"ctrl/_other 3", "ctrl/c1 1", "ctrl/c3 1"}; !slices.Equal(got, want) {
		t.Fatalf("series after forgetting c2 = %q, want %q", got, want)
	}
}

func TestForgottenSlotCreatesNoSeries(t *testing.T) {
	g, series := testGuard(t, ClusterLatencyOptions{})
	// A worker looked the slot up just before the cluster was forgotten.
	s := g.slot("ctrl", "gone")
	g.forget("gone")
	if o := g.createObserver(s, queueWait); o != nil {
		t.Fatal("a forgotten slot created a series")
	}
	if got := series(queueWait); len(got) != 0 {
		t.Fatalf("series %q after the cluster was forgotten", got)
	}
}

func TestLatencyOff(t *testing.T) {
	g, series := testGuard(t, ClusterLatencyOptions{MaxClusters: -1})
	g.observe(reconcileDuration, "ctrl", "a", time.Millisecond)
	if got := series(reconcileDuration); len(got) != 0 {
		t.Fatalf("series %q with the histograms off", got)
	}
	// Raising the limit lets clusters counted among the others have their own place.
	g.configure(ClusterLatencyOptions{MaxClusters: 1})
	g.observe(reconcileDuration, "ctrl", "a", time.Millisecond)
	g.observe(reconcileDuration, "ctrl", "b", time.Millisecond)
	g.configure(ClusterLatencyOptions{MaxClusters: 2})
	g.observe(reconcileDuration, "ctrl", "b", time.Millisecond)
	if got, want := series(reconcileDuration), []string{"ctrl/_other 1", "ctrl/a 1", "ctrl/b 1"}; !slices.Equal(got, want) {
		t.Fatalf("series = %q, want %q", got, want)
	}
}

// The exported functions record in the registered histograms, and ForgetCluster deletes every
// series of the cluster.
func TestObserveAndForgetCluster(t *testing.T) {
	controller := t.Name()
	ObserveReconcileDuration(controller, "kept", 2*time.Second)
	ObserveQueueWait(controller, "kept", time.Second)
	ObserveReconcileDuration(controller, "gone", time.Second)
	ObserveQueueWait(controller, "gone", time.Second)
	BreakerTransition(controller, "gone", BreakerOpen)
	ReconcileTotal.WithLabelValues(controller, "gone", ResultError).Inc()

	count := func(c prometheus.Collector, cluster string) int {
		ch := make(chan prometheus.Metric, 1000)
		c.Collect(ch)
		close(ch)
		n := 0
		for m := range ch {
			var pb dto.Metric
			if err := m.Write(&pb); err != nil {
				t.Fatal(err)
			}
			labels := map[string]string{}
			for _, l := range pb.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["controller"] == controller && labels["cluster"] == cluster {
				n++
			}
		}
		return n
	}
	collectors := map[string]prometheus.Collector{
		"reconcile duration": ReconcileDuration, "queue wait": QueueWait, "breaker state": ClusterBreakerState,
		"breaker transitions": ClusterBreakerTransitions, "reconcile total": ReconcileTotal,
	}
	for name, c := range collectors {
		if n := count(c, "gone"); n != 1 {
			t.Fatalf("%s: %d series of cluster gone, want 1", name, n)
		}
	}
	ForgetCluster("gone")
	for name, c := range collectors {
		if n := count(c, "gone"); n != 0 {
			t.Errorf("%s: %d series of cluster gone after ForgetCluster, want 0", name, n)
		}
	}
	if count(ReconcileDuration, "kept") != 1 || count(QueueWait, "kept") != 1 {
		t.Error("ForgetCluster deleted the series of another cluster")
	}
}

func TestClusterLatencyOptionsDefaults(t *testing.T) {
	if got := (ClusterLatencyOptions{}).withDefaults().MaxClusters; got != 100 {
		t.Fatalf("default MaxClusters = %d, want 100", got)
	}
	if got := (ClusterLatencyOptions{MaxClusters: -1}).withDefaults().MaxClusters; got != -1 {
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
			g, _ := testGuard(b, ClusterLatencyOptions{MaxClusters: bc.max})
			for _, n := range names {
				g.observe(reconcileDuration, "ctrl", n, time.Millisecond)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				g.observe(reconcileDuration, "ctrl", names[i%clusters], time.Millisecond)
			}
		})
		b.Run(bc.name+"/parallel", func(b *testing.B) {
			g, _ := testGuard(b, ClusterLatencyOptions{MaxClusters: bc.max})
			for _, n := range names {
				g.observe(reconcileDuration, "ctrl", n, time.Millisecond)
			}
			b.ReportAllocs()
			b.SetParallelism(2) // 2 × GOMAXPROCS goroutines
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					g.observe(reconcileDuration, "ctrl", names[i%clusters], time.Millisecond)
					i++
				}
			})
		})
	}
}
