// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	mcbuilder "mcr.dev/core/builder"
	"mcr.dev/core/clusters"
	"mcr.dev/core/multicluster"
	mcreconcile "mcr.dev/core/reconcile"
)

// BenchmarkEngageFleet engages 50 clusters at once (spread over the fleet's members, each with
// its own cache) and measures the time from the first Engage until every cluster was reconciled
// once, plus what an engaged cluster costs in goroutines and heap.
func BenchmarkEngageFleet(b *testing.B) {
	const n = 50
	ns := namespace(b, members...)
	for _, m := range members {
		createConfigMap(b, m, ns, "cm", nil)
	}
	p := newTestProvider(clusters.Options[cluster.Cluster]{})
	mgr := startManager(b, p)
	var mu sync.Mutex
	firstSeen := map[multicluster.ClusterName]time.Time{}
	err := mcbuilder.ControllerManagedBy(mgr).Named("bench-" + ns).For(&corev1.ConfigMap{}).
		Complete(mcreconcile.Func(func(_ context.Context, req mcreconcile.Request) (reconcile.Result, error) {
			if req.NamespacedName == (types.NamespacedName{Namespace: ns, Name: "cm"}) {
				mu.Lock()
				if _, ok := firstSeen[req.ClusterName]; !ok {
					firstSeen[req.ClusterName] = time.Now()
				}
				mu.Unlock()
			}
			return reconcile.Result{}, nil
		}))
	if err != nil {
		b.Fatal(err)
	}
	<-p.started

	var totalSeconds, goroutinesPerCluster, heapPerCluster float64
	for i := 0; i < b.N; i++ {
		mu.Lock()
		clear(firstSeen)
		mu.Unlock()
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		goroutinesBefore := runtime.NumGoroutine()

		start := time.Now()
		var wg sync.WaitGroup
		for c := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				member := members[c%len(members)]
				if err := p.add(b, fmt.Sprintf("bench-%d-%d", i, c), fleet.Member(member).Config()); err != nil {
					b.Error(err)
				}
			}()
		}
		wg.Wait()
		eventually(b, 5*time.Minute, "every cluster reconciled", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(firstSeen) == n
		})
		totalSeconds += time.Since(start).Seconds()

		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		goroutinesPerCluster += float64(runtime.NumGoroutine()-goroutinesBefore) / n
		heapPerCluster += float64(int64(after.HeapInuse)-int64(before.HeapInuse)) / n / (1 << 20)

		for c := range n {
			p.Remove(multicluster.ClusterName(fmt.Sprintf("bench-%d-%d", i, c)))
		}
		eventually(b, time.Minute, "every cluster disengaged", func() bool { return len(mgr.EngagedClusters()) == 0 })
	}
	b.ReportMetric(totalSeconds/float64(b.N), "s/50-clusters-reconciled")
	b.ReportMetric(goroutinesPerCluster/float64(b.N), "goroutines/cluster")
	b.ReportMetric(heapPerCluster/float64(b.N), "heap-MiB/cluster")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkEngageToFirstReconcile measures engage → first reconcile of one healthy cluster.
func BenchmarkEngageToFirstReconcile(b *testing.B) {
	ns := namespace(b, "a")
	createConfigMap(b, "a", ns, "cm", nil)
	p := newTestProvider(clusters.Options[cluster.Cluster]{})
	mgr := startManager(b, p)
	reconciled := make(chan multicluster.ClusterName, 1)
	err := mcbuilder.ControllerManagedBy(mgr).Named("first-" + ns).For(&corev1.ConfigMap{}).
		Complete(mcreconcile.Func(func(_ context.Context, req mcreconcile.Request) (reconcile.Result, error) {
			if req.Namespace == ns {
				select {
				case reconciled <- req.ClusterName:
				default:
				}
			}
			return reconcile.Result{}, nil
		}))
	if err != nil {
		b.Fatal(err)
	}
	<-p.started
	var total time.Duration
	for i := 0; i < b.N; i++ {
		name := multicluster.ClusterName(fmt.Sprintf("first-%d", i))
		start := time.Now()
		p.mustAdd(b, string(name), fleet.Member("a").Config())
		for got := <-reconciled; got != name; {
			got = <-reconciled
		}
		total += time.Since(start)
		p.Remove(name)
	}
	b.ReportMetric(total.Seconds()/float64(b.N), "s/engage-to-reconcile")
	b.ReportMetric(0, "ns/op")
}
