// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	// EngagedClusters is the number of clusters currently engaged with the manager.
	EngagedClusters = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "mcr_engaged_clusters",
		Help: "Number of clusters currently engaged with the multi-cluster manager.",
	})

	// EngageAttempts counts Engage calls on the manager by result.
	EngageAttempts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mcr_engage_attempts_total",
		Help: "Number of attempts to engage a cluster, by result (success or error).",
	}, []string{"result"})

	// EngageDuration is the time the manager took to engage a cluster with every Aware.
	EngageDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "mcr_engage_duration_seconds",
		Help:    "Time taken to engage a cluster with every registered Aware.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10),
	})

	// ReconcileTotal counts reconciles per controller, cluster and result, recorded by
	// ObserveReconcile under the cluster guard (see ClusterSeriesOptions).
	ReconcileTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mcr_reconcile_total",
		Help: "Number of reconciles per controller, cluster and result.",
	}, []string{"controller", "cluster", "result"})

	// ClusterSourceErrors counts per-cluster sources that failed to start or to sync in time.
	ClusterSourceErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mcr_cluster_source_errors_total",
		Help: "Number of per-cluster event sources that failed to start or to sync in time.",
	}, []string{"controller"})
	// ParkedSources is the number of a controller's per-cluster sources that wait for their
	// cluster to serve their kind (see "Kinds a member does not serve" in mcr.dev/core/controller).
	ParkedSources = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "mcr_parked_sources",
		Help: "Number of per-cluster event sources parked because their cluster does not serve their kind.",
	}, []string{"controller"})
	// ParkedFieldIndexes is the number of field indexes, counted per cluster, that wait for their
	// cluster to serve their kind (see mcr.dev/core/clusters).
	ParkedFieldIndexes = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "mcr_parked_field_indexes",
		Help: "Number of per-cluster field indexes parked because their cluster does not serve their kind.",
	})
)

// Result labels of mcr_engage_attempts_total and mcr_reconcile_total.
const (
	ResultSuccess      = "success"
	ResultError        = "error"
	ResultRequeue      = "requeue"
	ResultRequeueAfter = "requeue_after"
)

func init() {
	ctrlmetrics.Registry.MustRegister(EngagedClusters, EngageAttempts, EngageDuration, ReconcileTotal, ClusterSourceErrors,
		ParkedSources, ParkedFieldIndexes)
}
