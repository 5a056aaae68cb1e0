// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package metrics declares the Prometheus metrics of mcr's manager and controllers. They are
// registered with controller-runtime's registry (sigs.k8s.io/controller-runtime/pkg/metrics), so
// they are served by the manager's metrics endpoint next to controller-runtime's own.
//
//	mcr_engaged_clusters                        gauge     clusters engaged with the manager
//	mcr_engage_attempts_total{result}           counter   Engage calls, result "success" or "error"
//	mcr_engage_duration_seconds                 histogram time to engage a cluster with every Aware
//	mcr_reconcile_total{controller,cluster,result} counter reconciles per cluster; result is
//	                                                      success, error, requeue or requeue_after
//	mcr_cluster_source_errors_total{controller} counter   per-cluster sources that failed to start or sync
//	mcr_reconcile_duration_seconds{controller,cluster} histogram  reconcile time per cluster (bounded, see below)
//	mcr_queue_wait_seconds{controller,cluster}  histogram time a due request waited in the cluster-fair queue
//	mcr_cluster_breaker_state{controller,cluster,state} gauge circuit breaker of the cluster-fair queue:
//	                                                      1 for the current state (closed, half_open,
//	                                                      open), 0 for the others
//	mcr_cluster_breaker_transitions_total{controller,cluster,state} counter breaker transitions by state entered
//	mcr_sharding_owned_clusters                 gauge     clusters this replica owns and has engaged
//	mcr_sharding_peers                          gauge     live replicas of the group, this one included while current
//	mcr_sharding_ownership_changes_total{change} counter  clusters acquired, released or lost
//	mcr_sharding_lease_writes_total{role}       counter   Lease writes, role "member" or "cluster"
//	mcr_build_info{go_version,core_version,...} gauge     1; the Go and mcr.dev module versions built in
//
// Every series labeled with a cluster is recorded through one guard (ObserveReconcile,
// ObserveQueueWait, BreakerTransition), which bounds them while clusters stay: only the first
// ClusterSeriesOptions.MaxClusters clusters of a controller (100 by default) get series of their
// own, the others are recorded under the cluster label OtherClusters in every series alike. They
// are deleted when the cluster is disengaged (ForgetCluster), so a churning fleet does not grow
// the registry either. docs/advanced/observability.md is the user's reference for them.
package metrics
