package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"mcr.dev/core/multicluster"
)

// States of a cluster's circuit breaker in the cluster-fair queue: the state label of
// mcr_cluster_breaker_transitions_total. mcr_cluster_breaker_state reports them as 0 (closed),
// 1 (half open) and 2 (open), so that "> 0" finds the clusters not served normally.
const (
	// BreakerClosed: the cluster's requests are served.
	BreakerClosed = "closed"
	// BreakerHalfOpen: the backoff has passed; one request is let through as a probe.
	BreakerHalfOpen = "half_open"
	// BreakerOpen: the cluster's reconciles kept failing; its requests are held back.
	BreakerOpen = "open"
)

var breakerValues = map[string]float64{BreakerClosed: 0, BreakerHalfOpen: 1, BreakerOpen: 2}

var (
	// ClusterBreakerState is the state of each cluster's circuit breaker, per controller: 0
	// closed, 1 half open, 2 open. A cluster whose breaker never opened has no series.
	ClusterBreakerState = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "mcr_cluster_breaker_state",
		Help: "State of the cluster's circuit breaker in the controller's queue: 0 closed, 1 half open, 2 open.",
	}, []string{"controller", "cluster"})

	// ClusterBreakerTransitions counts the transitions of each cluster's circuit breaker, per
	// controller, by the state entered.
	ClusterBreakerTransitions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mcr_cluster_breaker_transitions_total",
		Help: "Number of transitions of the cluster's circuit breaker in the controller's queue, by state entered (open, half_open, closed).",
	}, []string{"controller", "cluster", "state"})
)

func init() {
	ctrlmetrics.Registry.MustRegister(ClusterBreakerState, ClusterBreakerTransitions)
}

// BreakerTransition records that the circuit breaker of the controller's queue for the cluster
// entered state, one of BreakerClosed, BreakerHalfOpen and BreakerOpen.
func BreakerTransition(controller string, cluster multicluster.ClusterName, state string) {
	ClusterBreakerState.WithLabelValues(controller, string(cluster)).Set(breakerValues[state])
	ClusterBreakerTransitions.WithLabelValues(controller, string(cluster), state).Inc()
}
