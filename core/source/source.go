// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package source

import (
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"mcr.dev/core/multicluster"
	mcreconcile "mcr.dev/core/reconcile"
)

// TypedSource builds, for each engaged cluster, the source that watches it. The returned bool
// says whether the cluster should be watched at all; when it is false the returned source must
// still be valid, but it is not started.
type TypedSource[object client.Object, request mcreconcile.ClusterAware[request]] interface {
	ForCluster(multicluster.ClusterName, cluster.Cluster) (source.TypedSource[request], bool, error)
}

// Source is a TypedSource of multi-cluster requests.
type Source = TypedSource[client.Object, mcreconcile.Request]

// TypedSyncingSource is a TypedSource whose per-cluster sources can be waited on until synced,
// and which can be narrowed to some clusters or project the watched object.
type TypedSyncingSource[object client.Object, request mcreconcile.ClusterAware[request]] interface {
	TypedSource[object, request]

	// SyncingForCluster is ForCluster returning a source that supports WaitForSync.
	SyncingForCluster(multicluster.ClusterName, cluster.Cluster) (source.TypedSyncingSource[request], bool, error)
	// WithProjection sets a function that turns the watched object into the one actually
	// watched in a cluster (for example PartialObjectMetadata). It modifies and returns the
	// receiver.
	WithProjection(func(cluster.Cluster, object) (object, error)) TypedSyncingSource[object, request]
	// WithClusterFilter restricts the clusters watched. It modifies and returns the receiver.
	WithClusterFilter(ClusterFilterFunc) TypedSyncingSource[object, request]
}

// SyncingSource is a TypedSyncingSource of multi-cluster requests.
type SyncingSource[object client.Object] = TypedSyncingSource[object, mcreconcile.Request]

// ClusterFilterFunc decides whether a source watches a cluster. It is called once when the
// cluster is engaged.
type ClusterFilterFunc func(clusterName multicluster.ClusterName, cluster cluster.Cluster) bool
