// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package sharding_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"mcr.dev/core/metrics"
	"mcr.dev/core/sharding"
)

func leaseWrites() float64 {
	return testutil.ToFloat64(metrics.ShardingLeaseWrites.WithLabelValues(sharding.RoleMember)) +
		testutil.ToFloat64(metrics.ShardingLeaseWrites.WithLabelValues(sharding.RoleCluster))
}

// BenchmarkSteadyStateLeaseWrites measures the Lease writes per second of three replicas
// sharing 300 clusters once ownership has settled, next to what one renewal per cluster Lease
// per RenewInterval would cost. Run with -benchtime=1x; each iteration watches 5 seconds.
func BenchmarkSteadyStateLeaseWrites(b *testing.B) {
	g := newGroup(b, 300)
	ids := replicaIDs(3)
	for _, id := range ids {
		g.start(id)
	}
	settled := g.waitSettled(ids...)
	renewInterval := testLeaseDuration / 3
	const window = 5 * time.Second
	var perSecond float64
	for b.Loop() {
		before := leaseWrites()
		time.Sleep(window) // measuring a rate over a window, not waiting for a condition
		perSecond = (leaseWrites() - before) / window.Seconds()
	}
	b.ReportMetric(settled.Seconds(), "s-to-settle")
	b.ReportMetric(perSecond, "writes/s")
	b.ReportMetric(float64(len(g.names))/renewInterval.Seconds(), "per-cluster-renewal-writes/s")
}

// BenchmarkFailover measures how long clusters take to move after a graceful stop and after a
// replica is cut off from the host cluster, with a 3s LeaseDuration. Run with -benchtime=1x.
func BenchmarkFailover(b *testing.B) {
	var graceful, partition time.Duration
	for b.Loop() {
		g := newGroup(b, 60)
		ids := replicaIDs(3)
		for _, id := range ids {
			g.start(id)
		}
		g.waitSettled(ids...)

		start := time.Now()
		g.stop("replica-0")
		g.waitSettled("replica-1", "replica-2")
		graceful += time.Since(start)

		g.replicas["replica-1"].cut.Store(true)
		start = time.Now()
		g.waitSettled("replica-2")
		partition += time.Since(start)
		for _, id := range ids[1:] {
			g.stop(id)
		}
	}
	b.ReportMetric(graceful.Seconds()/float64(b.N), "graceful-s")
	b.ReportMetric(partition.Seconds()/float64(b.N), "partition-s")
	b.ReportMetric(testLeaseDuration.Seconds(), "lease-duration-s")
}

// BenchmarkClusterLeaseName is the cost of naming a cluster's Lease.
func BenchmarkClusterLeaseName(b *testing.B) {
	names := clusterNames(1000)
	i := 0
	for b.Loop() {
		_ = sharding.ClusterLeaseName("group", names[i%len(names)])
		i++
	}
}
