// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package ownership

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Actions of mcr_ownership_orphans_total.
const (
	ActionDeleted  = "deleted"
	ActionReported = "reported" // DryRun
)

var (
	orphans = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mcr_ownership_orphans_total",
		Help: "Projections found whose owner does not exist or has another UID, by cluster, kind and action (deleted, or reported in dry-run mode).",
	}, []string{"cluster", "kind", "action"})
	sweepErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mcr_ownership_sweep_errors_total",
		Help: "Errors of the orphan sweep, by cluster (listing, reading an owner, deleting).",
	}, []string{"cluster"})
	sweeps = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "mcr_ownership_sweeps_total",
		Help: "Orphan sweeps run.",
	})
	abandonedClusters = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "mcr_ownership_abandoned_clusters_total",
		Help: "Clusters holding projections that an owner's finalizer gave up on (Options.GiveUpAfter).",
	})
)

func init() {
	ctrlmetrics.Registry.MustRegister(orphans, sweepErrors, sweeps, abandonedClusters)
}
