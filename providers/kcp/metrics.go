// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kcp

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"mcr.dev/core/providers/kit"
)

// Errors (mcr_kcp_provider_errors_total) counts failures by reason: EndpointUnavailable (an
// endpoint of the endpoint object cannot be watched), InvalidEndpointObject (its URLs cannot be
// read), EngageFailed, ClusterUnreachable and ClusterSetupFailed (a ready logical cluster cannot
// be engaged), each counted every attempt, InvalidObject (an object of the watched type without
// a valid kcp.io/cluster annotation; counted each time it changes), HandlerPanicked (a panic
// of one of Options.Handlers) and MissedDeletion (an object deleted while an endpoint's watch
// was down that the informer's relist kept, found by the check against a live list).
//
// BrokenClusters (mcr_kcp_provider_broken_logical_clusters) is the number of ready logical
// clusters that cannot be engaged at the moment, summed over the kcp providers of the process.
var Errors, BrokenClusters = kit.RegisterMetrics(providerName, "logical_clusters") //nolint:revive // one call creates and registers both

// BrokenLogicalClusters is the former name of BrokenClusters, the same gauge.
//
// Deprecated: use BrokenClusters.
var BrokenLogicalClusters = BrokenClusters

var (
	// BrokenEndpoints is the number of endpoints (virtual workspace URLs) of the endpoint
	// objects that cannot be watched at the moment, plus the endpoint objects whose URLs cannot
	// be read, summed over the kcp providers of the process. Alert on it staying above zero.
	BrokenEndpoints = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "mcr_kcp_provider_broken_endpoints",
		Help: "Number of virtual workspace endpoints the kcp provider cannot watch at the moment.",
	})

	// LogicalClusters is the number of logical clusters engaged, summed over the kcp providers
	// of the process.
	LogicalClusters = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "mcr_kcp_provider_logical_clusters",
		Help: "Number of logical clusters the kcp provider has engaged.",
	})
)

func init() {
	ctrlmetrics.Registry.MustRegister(BrokenEndpoints, LogicalClusters)
}
