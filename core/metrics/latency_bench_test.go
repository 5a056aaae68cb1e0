// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package metrics

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"mcr.dev/core/multicluster"
)

// BenchmarkClusterHistograms measures what the per-cluster latency histograms cost at fleet
// scale, for one controller that observed one reconcile and one queue wait in each of 1, 100
// (the default MaxClusters) and 1,000 clusters, and in 1,000 clusters with MaxClusters 1,000
// (what the bound saves). The series are those of the registered
// mcr_reconcile_duration_seconds and mcr_queue_wait_seconds, through a guard of their own with
// the default options; one op is one scrape of them: gather, then encode in the text format.
//
//	go test -run XXX -bench BenchmarkClusterHistograms ./metrics
//
// Metrics: bytes/cluster (heap retained by the guard and the series after one observation of
// each histogram per cluster, divided by the clusters), series (Prometheus series of the
// controller: 15 per histogram and label pair), scrape-bytes (text exposition of those series),
// gather-ns (the Gather part of a scrape).
func BenchmarkClusterHistograms(b *testing.B) {
	for _, bc := range []struct {
		clusters int
		opts     ClusterSeriesOptions
	}{
		{clusters: 1},
		{clusters: defaultMaxClusters},
		{clusters: 1000},
		// What the bound saves: every cluster with series of its own.
		{clusters: 1000, opts: ClusterSeriesOptions{MaxClusters: 1000}},
	} {
		clusters, opts := bc.clusters, bc.opts.withDefaults()
		name := fmt.Sprintf("clusters=%d", clusters)
		if bc.opts.MaxClusters != 0 {
			name += fmt.Sprintf("/max=%d", opts.MaxClusters)
		}
		b.Run(name, func(b *testing.B) {
			controller := "bench-" + b.Name()
			reg := prometheus.NewRegistry()
			vecs := clusterVecs{reconcileDuration: ReconcileDuration, queueWait: QueueWait}
			reg.MustRegister(vecs.reconcileDuration, vecs.queueWait)
			b.Cleanup(func() {
				for _, vec := range []*prometheus.HistogramVec{vecs.reconcileDuration, vecs.queueWait} {
					vec.DeletePartialMatch(prometheus.Labels{"controller": controller})
				}
			})
			names := make([]multicluster.ClusterName, clusters)
			for i := range names {
				names[i] = multicluster.ClusterName(fmt.Sprintf("cluster-%04d", i))
			}

			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			g := newClusterGuard(opts, vecs)
			for _, name := range names {
				s := g.slot(controller, name)
				g.observe(s, reconcileDuration, 20*time.Millisecond)
				g.observe(s, queueWait, time.Millisecond)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			runtime.KeepAlive(g)
			bytesPerCluster := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(clusters)

			var scrape bytes.Buffer
			var series int
			var gather time.Duration
			for b.Loop() {
				start := time.Now()
				families, err := reg.Gather()
				gather += time.Since(start)
				if err != nil {
					b.Fatal(err)
				}
				scrape.Reset()
				series = 0
				for _, f := range families {
					mine := ofController(f, controller)
					if len(mine.GetMetric()) == 0 {
						continue
					}
					for _, m := range mine.GetMetric() {
						// Each bucket, +Inf (not among the buckets), _sum and _count.
						series += len(m.GetHistogram().GetBucket()) + 3
					}
					if _, err := expfmt.MetricFamilyToText(&scrape, mine); err != nil {
						b.Fatal(err)
					}
				}
			}
			labels := min(clusters, opts.MaxClusters)
			if clusters > opts.MaxClusters {
				labels++ // OtherClusters
			}
			if want := 2 * 15 * labels; series != want {
				b.Fatalf("%d series, want %d: the guard did not bound them as documented", series, want)
			}
			b.ReportMetric(bytesPerCluster, "bytes/cluster")
			b.ReportMetric(float64(series), "series")
			b.ReportMetric(float64(scrape.Len()), "scrape-bytes")
			b.ReportMetric(float64(gather.Nanoseconds())/float64(b.N), "gather-ns")
		})
	}
}

// ofController returns f with only the metrics labeled with controller: the vectors are
// global, and other tests of the binary may have left series in them.
func ofController(f *dto.MetricFamily, controller string) *dto.MetricFamily {
	mine := &dto.MetricFamily{Name: f.Name, Help: f.Help, Type: f.Type, Unit: f.Unit}
	for _, m := range f.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "controller" && l.GetValue() == controller {
				mine.Metric = append(mine.Metric, m)
			}
		}
	}
	return mine
}
