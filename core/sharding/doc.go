// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package sharding lets several replicas of a multi-cluster controller share a fleet: every
// cluster a provider offers is engaged with the controllers of exactly one live replica, and
// moves to another replica when its owner stops or dies. manager.WithSharding turns it on;
// the Coordinator can also sit in front of any other multicluster.Aware.
//
// # How it fits
//
// The provider runs on every replica and engages every cluster with the manager, as without
// sharding. The manager passes them to a Coordinator, which engages the manager's Awares
// (controllers, runnables) only with the clusters this replica owns. Awares see the usual
// contract: an engage context per cluster that ends when the cluster leaves this replica,
// all-or-nothing engagement, replay to Awares added late.
//
// # Membership
//
// Each replica holds a membership Lease (coordination.k8s.io/v1) in Options.Namespace of the
// host cluster, labeled with the group, and renews it every RenewInterval. The live peers are
// the group's membership Leases that have changed within the last LeaseDuration, as measured on
// the observer's own clock: the times written in Leases are never compared with local time, so
// clock offsets between nodes do not matter. A replica whose renewals fail for RenewDeadline
// disengages every cluster on its own; a peer that sees a membership Lease unchanged for
// LeaseDuration declares it expired by clearing its holder, conditionally on the version it saw.
// That write and the silent replica's own renewals go to the same object, so at most one of
// them succeeds: a replica is only ever declared expired after it has stopped.
//
// A replica that stops (its Start context ends) disengages its clusters, deletes their Leases
// and its membership Lease, so that the others take over within about RenewInterval. One that
// crashes or is cut off is taken over about LeaseDuration after its last successful renewal
// (peers schedule a round for the moment it may be declared expired).
//
// # Ownership
//
// Owner assigns each cluster by weighted rendezvous hashing of the cluster name over the live
// peers. Replicas agree without coordination as long as they see the same peers, and adding
// or removing one of N replicas moves only about 1/N of the clusters, all of them to or from
// that replica. Weights (Options.Weight) use the -w/ln(u) score, exactly proportional and free
// of overflow.
//
// # Fencing
//
// Hashing decides who should own a cluster; a per-cluster Lease decides who does. While the
// replicas' views of the membership differ (a peer just joined, or just died), two may both
// believe they own a cluster; only the one that holds the cluster's Lease engages it. A replica
// writes itself into the Lease (create, or update conditional on the version it read) before
// engaging the cluster, and on losing ownership it first disengages the cluster and then
// deletes the Lease. A Lease held by a live peer is waited for (retried every RetryPeriod); one
// held by a peer declared expired is taken over.
//
// Cluster Lease names are DNS-1123 labels built from the group and the cluster name plus a
// hash of both, so any cluster name (long, upper case, with '/' or ':') gives a valid, distinct
// name; the full cluster name is kept in an annotation, and a collision is reported rather
// than shared.
//
// # Cost on the API server
//
// A cluster Lease is not renewed on its own: it is valid as long as its holder's membership is,
// so one membership renewal renews all the cluster Leases of a replica at once. Lease writes per
// second are therefore about replicas / RenewInterval (0.2/s per replica with the defaults)
// plus two writes per ownership change, whatever the fleet size, instead of owned clusters /
// RenewInterval (200/s for 1,000 clusters renewed every 5s) when every cluster Lease has its
// own renewal. Reads are one list of the membership Leases per replica per RenewInterval, plus
// a list of the cluster Leases while clusters wait to be taken and every ten RenewIntervals to
// check them. A longer LeaseDuration lowers the rate further at the price of a slower failover.
//
// # What it guarantees, and what it does not
//
//   - A cluster is engaged on at most one replica at a time, provided that identities are
//     unique, that nobody edits the group's Leases by hand, and that a replica's clock does not
//     run so slow against its peers' that LeaseDuration - RenewDeadline (5s by default) is
//     consumed (process pauses count as well).
//   - Disengaging a cluster ends its engage context before its Lease is released, but a
//     reconcile already running for it on the old owner may still finish after the new owner
//     starts. The manager narrows this: with sharding, GetCluster only answers for owned
//     clusters, so requests still queued for a cluster that left end without touching it. Keep
//     reconciles short (controller-runtime's ReconciliationTimeout) when overlap matters.
//   - A cluster whose Awares fail to engage stays owned and is retried with backoff (RetryPeriod
//     doubling to one minute); the provider is not told, since Engage returned long before.
//   - The local cluster (manager.WithLocalClusterEngaged) is not sharded: it is engaged on every
//     replica, because it is the cluster the replicas run in and share.
//
// Sharding and leader election exclude each other: every replica runs its controllers.
//
// # Permissions
//
// The replicas need, in Options.Namespace of the host cluster:
//
//	// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;create;update;delete
//
// # Metrics
//
// mcr_sharding_owned_clusters, mcr_sharding_peers, mcr_sharding_ownership_changes_total{change}
// and mcr_sharding_lease_writes_total{role}, in controller-runtime's registry (see package
// metrics). Logs carry the replica under "replica" and the cluster under "cluster".
package sharding
