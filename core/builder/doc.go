// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package builder wires multi-cluster controllers the way controller-runtime's builder wires
// single-cluster ones: For, Owns and Watches declare what the controller watches, and every
// declaration is watched in every cluster the controller is engaged with.
//
// Which clusters a watch covers is decided per watch by EngageOptions. By default a watch covers
// every cluster the manager engages: the provider's clusters, and the local cluster when the
// manager engages it (always in single-cluster mode, i.e. without a provider; on request with
// manager.WithLocalClusterEngaged). WithEngageWithLocalCluster(true) makes the controller watch
// the local cluster even when the manager does not engage it; WithEngageWithLocalCluster(false)
// and WithEngageWithProviderClusters(false) exclude one side; WithClusterFilter narrows further.
//
// Requests carry their cluster, reconcilers get it in the context too, and framework log lines
// carry cluster, namespace and name. Reconciles for a cluster that has left the fleet end
// quietly (see reconcile.ClusterNotFoundWrapper), unless WithClusterNotFoundWrapper(false).
package builder
