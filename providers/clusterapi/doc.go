// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package clusterapi is a cluster provider that engages one cluster for every ready Cluster API
// Cluster (cluster.x-k8s.io) on a management cluster, using the kubeconfig Secret Cluster API
// keeps for it, and keeps the fleet in step while Clusters are provisioned, rotate their
// credentials and are deleted.
//
// It watches, on the management (host) cluster, the Cluster objects (v1beta2, or v1beta1 with
// Options.APIVersion) and the Secrets labeled cluster.x-k8s.io/cluster-name; each Cluster's
// kubeconfig is in the Secret "<cluster>-kubeconfig" under the data key "value". A selected
// Cluster is engaged once Options.IsReady says so (by default ControlPlaneInitialized) and
// disengaged when it stops being ready or selected, or is being deleted. A rotated kubeconfig is
// engaged again at once.
//
// A cluster is named "<namespace>/<name>" after its Cluster object (ClusterName, ClusterKey), as
// in multicluster-runtime's Cluster API provider; names are unique and stable across restarts.
//
// Create the provider with New, which runs a cache of its own on the management cluster, or with
// NewForHost, which reads through a cache you run, and hand it to the manager, which starts it;
// no SetupWithManager is needed. Options embeds kit.Options (mcr.dev/core/providers/kit), the
// fields every provider shares; the provider runs on that kit's engine and engage step.
//
// docs/providers/clusterapi.md in the mcr repository is the full reference: readiness,
// credentials and rotation, Events, metrics and troubleshooting, RBAC, options.
package clusterapi
