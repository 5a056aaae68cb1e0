// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package clusterapi is a cluster provider that engages one cluster for every ready Cluster API
// Cluster (cluster.x-k8s.io, v1beta2 or v1beta1) on a management cluster, reached with the
// kubeconfig Secret "<cluster>-kubeconfig" Cluster API keeps for it. A cluster is named
// "<namespace>/<name>" after its Cluster object (ClusterName, ClusterKey); it is re-engaged when
// the Secret rotates and disengaged when the Cluster stops being ready or is being deleted.
//
// Create it with New (a cache of its own on the management cluster) or NewForHost (a cache you
// run) and hand it to the manager, which starts it. Options embeds kit.Options, the fields every
// provider shares.
//
// See docs/providers/clusterapi.md in the mcr repository: readiness, credentials and rotation,
// Events and troubleshooting, RBAC and options.
package clusterapi
