// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// States of a cluster's circuit breaker in the cluster-fair queue: the values of the state label
// of mcr_cluster_breaker_state and mcr_cluster_breaker_transitions_total.
const (
	// BreakerClosed: the cluster's requests are served.
	BreakerClosed = "closed"
	// BreakerHalfOpen: the backoff has passed; one request is let through as a probe.
	BreakerHalfOpen = "half_open"
	// BreakerOpen: the cluster's reconciles kept failing; its requests are held back.
	BreakerOpen = "open"
)

var (
	// ClusterBreakerState is the state of each cluster's circuit breaker, per controller, as
	// kube-state-metrics reports states: one series per state, 1 for the current state and 0 for
	// the others (so `== 1` selects, `sum by (state)` counts). Under the cluster label
	// OtherClusters each series counts the clusters in that state. A cluster whose breaker never
	// left closed has no series; a forgotten cluster loses them. Recorded by BreakerTransition.
	ClusterBreakerState = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "mcr_cluster_breaker_state",
		Help: "State of the cluster's circuit breaker in the controller's queue: 1 for the current state (closed, half_open or open), 0 for the others; for cluster=\"_other\", the number of those clusters in the state.",
	}, []string{"controller", "cluster", "state"})

	// ClusterBreakerTransitions counts the transitions of each cluster's circuit breaker, per
	// controller, by the state entered. Recorded by BreakerTransition.
	ClusterBreakerTransitions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mcr_cluster_breaker_transitions_total",
		Help: "Number of transitions of the cluster's circuit breaker in the controller's queue, by state entered (open, half_open, closed).",
	}, []string{"controller", "cluster", "state"})
)

func init() {
	ctrlmetrics.Registry.MustRegister(ClusterBreakerState, ClusterBreakerTransitions)
}
