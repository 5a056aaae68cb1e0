// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package workqueue_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	kworkqueue "k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"mcr.dev/core/metrics"
	mcreconcile "mcr.dev/core/reconcile"
	"mcr.dev/core/workqueue"
)

// BenchmarkHealthyClusterWithFailingCluster measures how long a healthy cluster's requests take,
// from Add to the end of their reconcile, while another cluster fails every reconcile: a
// controller-runtime controller with 4 workers on the cluster-fair queue, without and with the
// breaker (and with a cap of one in-flight request per cluster instead).
//
// The failing cluster has 200 objects; each reconcile takes 20ms (an API call that fails slowly)
// and returns an error, retried with per-item exponential backoff from 5ms to 1s, so its retries
// alone keep the 4 workers busy. Each iteration adds one request of the healthy cluster, whose
// reconcile takes 1ms, and waits for it. Reported: the healthy cluster's p50 and p99 in
// milliseconds, and the failing cluster's reconciles per second.
func BenchmarkHealthyClusterWithFailingCluster(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts workqueue.Options
	}{
		{"no-breaker", workqueue.Options{}},
		{"breaker", workqueue.Options{Breaker: &workqueue.BreakerOptions{}}},
		{"cap=1", workqueue.Options{MaxInFlightPerCluster: 1}},
	} {
		b.Run(bc.name, func(b *testing.B) { benchmarkFailingCluster(b, bc.opts) })
	}
}

func benchmarkFailingCluster(b *testing.B, opts workqueue.Options) {
	const (
		failingObjects = 200
		failingWork    = 20 * time.Millisecond
		healthyWork    = time.Millisecond
	)
	var (
		failed  atomic.Int64
		healthy = make(chan struct{}, 1)
	)
	reconciler := mcreconcile.Func(func(_ context.Context, req mcreconcile.Request) (mcreconcile.Result, error) {
		if req.ClusterName == "failing" {
			time.Sleep(failingWork)
			failed.Add(1)
			return mcreconcile.Result{}, errors.New("the member's API server answers 503")
		}
		time.Sleep(healthyWork)
		healthy <- struct{}{}
		return mcreconcile.Result{}, nil
	})
	opts.Logger = logr.Discard()
	queues := make(chan kworkqueue.TypedRateLimitingInterface[mcreconcile.Request], 1)
	c, err := controller.NewTypedUnmanaged(fmt.Sprint("bench-breaker-", b.Name()), controller.TypedOptions[mcreconcile.Request]{
		Reconciler:              reconciler,
		MaxConcurrentReconciles: 4,
		SkipNameValidation:      ptr.To(true),
		RateLimiter:             kworkqueue.NewTypedItemExponentialFailureRateLimiter[mcreconcile.Request](5*time.Millisecond, time.Second),
		NewQueue:                workqueue.ClusterFairQueue[mcreconcile.Request](opts),
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := c.Watch(source.TypedFunc[mcreconcile.Request](func(_ context.Context, q kworkqueue.TypedRateLimitingInterface[mcreconcile.Request]) error {
		queues <- q
		return nil
	})); err != nil {
		b.Fatal(err)
	}
	// The named queue records per-cluster latency; leave it out of the comparison.
	metrics.SetClusterSeriesOptions(metrics.ClusterSeriesOptions{MaxClusters: -1})
	defer metrics.SetClusterSeriesOptions(metrics.ClusterSeriesOptions{})

	ctx, cancel := context.WithCancel(b.Context())
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
	}()
	q := <-queues
	for i := range failingObjects {
		q.Add(benchRequest("failing", i))
	}
	// Let the storm (or the breaker) settle.
	time.Sleep(time.Second)

	latencies := make([]time.Duration, 0, b.N)
	failedBefore := failed.Load()
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		q.Add(benchRequest("healthy", i))
		<-healthy
		latencies = append(latencies, time.Since(start))
	}
	b.StopTimer()
	failedPerSecond := float64(failed.Load()-failedBefore) / b.Elapsed().Seconds()

	slices.Sort(latencies)
	quantile := func(q float64) float64 {
		return float64(latencies[int(q*float64(len(latencies)-1))]) / float64(time.Millisecond)
	}
	b.ReportMetric(quantile(0.5), "p50-ms")
	b.ReportMetric(quantile(0.99), "p99-ms")
	b.ReportMetric(failedPerSecond, "failing-reconciles/s")
}

// BenchmarkQueueWaitHistogram measures Add, Get and Done on a named queue (which reports
// controller-runtime's workqueue metrics) with the per-cluster queue wait histogram off and on.
func BenchmarkQueueWaitHistogram(b *testing.B) {
	for _, bc := range []struct {
		name string
		max  int
	}{{"histogram=off", -1}, {"histogram=on", 0}} {
		b.Run(bc.name, func(b *testing.B) {
			metrics.SetClusterSeriesOptions(metrics.ClusterSeriesOptions{MaxClusters: bc.max})
			defer metrics.SetClusterSeriesOptions(metrics.ClusterSeriesOptions{})
			q := workqueue.NewClusterFair[mcreconcile.Request](fmt.Sprint("bench-wait-", bc.name), nil, workqueue.Options{})
			defer q.ShutDown()
			reqs := make([]mcreconcile.Request, 1000)
			for i := range reqs {
				reqs[i] = benchRequest(fmt.Sprint("c", i%10), i)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				q.Add(reqs[i%len(reqs)])
				item, _ := q.Get()
				q.Done(item)
			}
		})
	}
}
