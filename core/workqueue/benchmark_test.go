// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package workqueue_test

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	ctrlreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"mcr.dev/core/multicluster"
	mcreconcile "mcr.dev/core/reconcile"
	"mcr.dev/core/workqueue"
)

// queueKinds are the queues compared: this package's and controller-runtime's default. Both
// record no metrics (empty name), so the comparison is of the queues alone.
var queueKinds = []struct {
	name string
	new  func() priorityqueue.PriorityQueue[mcreconcile.Request]
}{
	{"clusterfair", func() priorityqueue.PriorityQueue[mcreconcile.Request] {
		return workqueue.NewClusterFair[mcreconcile.Request]("", nil, workqueue.Options{})
	}},
	{"priorityqueue", func() priorityqueue.PriorityQueue[mcreconcile.Request] {
		return priorityqueue.New[mcreconcile.Request]("")
	}},
}

func benchRequest(cluster string, i int) mcreconcile.Request {
	return mcreconcile.Request{
		Request:     ctrlreconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: fmt.Sprint("obj-", i)}},
		ClusterName: multicluster.ClusterName(cluster),
	}
}

// BenchmarkThroughput measures Add, Get and Done: one goroutine doing all three in turn
// (serial), and one producer with four workers (workers=4).
func BenchmarkThroughput(b *testing.B) {
	const clusters = 10
	for _, kind := range queueKinds {
		b.Run(kind.name+"/serial", func(b *testing.B) {
			q := kind.new()
			defer q.ShutDown()
			reqs := make([]mcreconcile.Request, 1000)
			for i := range reqs {
				reqs[i] = benchRequest(fmt.Sprint("c", i%clusters), i)
			}
			b.ResetTimer()
			for i := range b.N {
				q.Add(reqs[i%len(reqs)])
				item, _ := q.Get()
				q.Done(item)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "items/s")
		})

		b.Run(kind.name+"/workers=4", func(b *testing.B) {
			q := kind.new() // shut down below; controller-runtime's queue panics on a second ShutDown
			reqs := make([]mcreconcile.Request, b.N)
			for i := range reqs {
				reqs[i] = benchRequest(fmt.Sprint("c", i%clusters), i)
			}
			var processed atomic.Int64
			allDone := make(chan struct{})
			var workers sync.WaitGroup
			b.ResetTimer()
			for range 4 {
				workers.Go(func() {
					for {
						item, shutdown := q.Get()
						if shutdown {
							return
						}
						q.Done(item)
						if processed.Add(1) == int64(b.N) {
							close(allDone)
						}
					}
				})
			}
			for _, r := range reqs {
				q.Add(r)
			}
			<-allDone
			b.StopTimer()
			q.ShutDown()
			workers.Wait()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "items/s")
		})
	}
}

// BenchmarkFloodLatency measures how long a quiet cluster's requests wait while another cluster
// floods the queue. Cluster "noisy" queues 10,000 requests at once; four workers spend about
// 100µs on each request; cluster "quiet" adds a request every 2ms until the flood is processed.
// Reported: the quiet cluster's wait from Add to Get (p50, p99, max) and the time to process the
// flood. One iteration is one whole flood, so -benchtime of a few hundred ms runs one.
func BenchmarkFloodLatency(b *testing.B) {
	for _, kind := range queueKinds {
		b.Run(kind.name, func(b *testing.B) {
			var waits []time.Duration
			var floodTime time.Duration
			for range b.N {
				w, f := floodScenario(kind.new())
				waits = append(waits, w...)
				floodTime += f
			}
			slices.Sort(waits)
			ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
			b.ReportMetric(ms(percentile(waits, 0.50)), "quiet-p50-ms")
			b.ReportMetric(ms(percentile(waits, 0.99)), "quiet-p99-ms")
			b.ReportMetric(ms(waits[len(waits)-1]), "quiet-max-ms")
			b.ReportMetric(ms(floodTime)/float64(b.N), "flood-ms")
			b.ReportMetric(float64(len(waits))/float64(b.N), "quiet-requests")
		})
	}
}

func floodScenario(q priorityqueue.PriorityQueue[mcreconcile.Request]) (waits []time.Duration, floodTime time.Duration) {
	const (
		flood   = 10_000
		workers = 4
		work    = 100 * time.Microsecond
		period  = 2 * time.Millisecond
	)
	var (
		mu       sync.Mutex
		addedAt  = map[mcreconcile.Request]time.Time{}
		noisyCnt atomic.Int64
	)
	floodDone := make(chan struct{})
	start := time.Now()
	for i := range flood {
		q.Add(benchRequest("noisy", i))
	}

	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				item, shutdown := q.Get()
				if shutdown {
					return
				}
				now := time.Now()
				if item.ClusterName == "quiet" {
					mu.Lock()
					waits = append(waits, now.Sub(addedAt[item]))
					delete(addedAt, item)
					mu.Unlock()
				}
				time.Sleep(work)
				q.Done(item)
				if item.ClusterName == "noisy" && noisyCnt.Add(1) == flood {
					floodTime = time.Since(start)
					close(floodDone)
				}
			}
		})
	}

	ticker := time.NewTicker(period)
	for i := 0; ; i++ {
		select {
		case <-floodDone:
		case <-ticker.C:
			r := benchRequest("quiet", i)
			mu.Lock()
			addedAt[r] = time.Now()
			mu.Unlock()
			q.Add(r)
			continue
		}
		break
	}
	ticker.Stop()
	// Let the last quiet requests through before stopping.
	for {
		mu.Lock()
		pending := len(addedAt)
		mu.Unlock()
		if pending == 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	q.ShutDown()
	wg.Wait()
	return waits, floodTime
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(p*float64(len(sorted))))]
}
