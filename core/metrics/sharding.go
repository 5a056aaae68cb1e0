// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	// ShardingOwnedClusters is the number of clusters this replica owns and has engaged.
	ShardingOwnedClusters = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "mcr_sharding_owned_clusters",
		Help: "Number of clusters this replica owns (holds the Lease of) and has engaged.",
	})

	// ShardingPeers is the number of live replicas this replica sees, itself included.
	ShardingPeers = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "mcr_sharding_peers",
		Help: "Number of live replicas of the sharding group seen by this replica, itself included.",
	})

	// ShardingOwnershipChanges counts clusters this replica acquired, released or lost.
	ShardingOwnershipChanges = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mcr_sharding_ownership_changes_total",
		Help: "Number of cluster ownership changes on this replica, by change (acquired, released or lost).",
	}, []string{"change"})

	// ShardingLeaseWrites counts write requests for Leases (create, update, delete), by role of
	// the Lease (member or cluster): the load sharding puts on the host API server.
	ShardingLeaseWrites = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mcr_sharding_lease_writes_total",
		Help: "Number of Lease write requests (create, update, delete) by role (member or cluster).",
	}, []string{"role"})
)

// Change labels of mcr_sharding_ownership_changes_total.
const (
	// OwnershipAcquired: the replica took a cluster's Lease.
	OwnershipAcquired = "acquired"
	// OwnershipReleased: the replica gave a cluster's Lease back (rebalance, removal, stop).
	OwnershipReleased = "released"
	// OwnershipLost: the replica dropped clusters without releasing them, because its
	// membership lapsed or a Lease was changed behind its back.
	OwnershipLost = "lost"
)

func init() {
	ctrlmetrics.Registry.MustRegister(ShardingOwnedClusters, ShardingPeers, ShardingOwnershipChanges, ShardingLeaseWrites)
}
