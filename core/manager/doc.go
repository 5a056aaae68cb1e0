// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package manager provides the multi-cluster manager: a controller-runtime manager (the "local"
// manager, for the cluster the process runs in) plus a provider that discovers the fleet.
//
// Providers engage clusters with the manager; the manager engages them with every registered
// Aware (controllers, runnables, registries). It differs from multicluster-runtime's manager in
// ways controller authors rely on:
//
//   - Awares added after clusters were engaged are engaged with those clusters (replay).
//   - Engaging a cluster with all Awares is all or nothing: when one fails, the others are
//     disengaged again and the provider gets the error.
//   - The provider runs on every replica, like controller-runtime's caches, unless
//     WithProviderLeaderElection says otherwise; controllers still only run on the leader.
//   - The local cluster can be engaged as an ordinary cluster (WithLocalClusterEngaged), and is
//     engaged when there is no provider, so the same controller runs in single-cluster mode.
//   - Field indexes reach every engaged cluster, the local one included when it is engaged.
//   - GetCluster for an unknown name always wraps multicluster.ErrClusterNotFound.
//   - Several replicas can share the fleet (WithSharding): each cluster is engaged on exactly one
//     live replica, fenced by Kubernetes Leases, and moves when replicas come and go.
//   - Scheme, cache options and client rate limits can be set once for every member and the local
//     cluster (WithClusterDefaults), the providers' own options winning.
//   - Operations: FleetReadyCheck for readiness probes, AddFleetDebugHandler for a debug page of
//     the fleet on the metrics server (docs/operations.md).
package manager
