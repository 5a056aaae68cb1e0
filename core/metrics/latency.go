// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// latencyBuckets span a fast cache-only reconcile (1ms) to a slow or timing-out member (60s).
// Twelve buckets: each (controller, cluster) pair costs 15 series per histogram.
var latencyBuckets = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 60}

var (
	// ReconcileDuration is the time reconciles took, per controller and cluster, recorded by
	// ObserveReconcile under the cluster guard (see ClusterSeriesOptions).
	ReconcileDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "mcr_reconcile_duration_seconds",
		Help:    "Time taken by reconciles, per controller and cluster (clusters beyond the configured limit are labeled _other).",
		Buckets: latencyBuckets,
	}, []string{"controller", "cluster"})

	// QueueWait is the time requests of the cluster-fair queue waited between becoming due and
	// being handed to a worker, per controller and cluster, recorded by ObserveQueueWait under
	// the cluster guard.
	QueueWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "mcr_queue_wait_seconds",
		Help:    "Time requests waited in the cluster-fair queue between becoming due and being handed to a worker, per controller and cluster (clusters beyond the configured limit are labeled _other).",
		Buckets: latencyBuckets,
	}, []string{"controller", "cluster"})
)

func init() {
	ctrlmetrics.Registry.MustRegister(ReconcileDuration, QueueWait)
}
