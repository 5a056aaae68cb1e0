// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package context

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/cluster"
)

type clusterObjectKey struct{}

// WithClusterObject returns a copy of ctx that carries cl, the cluster object (client, cache,
// scheme, ...) of the cluster that WithCluster names. Code that serves a request of one member
// outside a reconciler, such as an admission webhook, hands it on this way.
func WithClusterObject(ctx context.Context, cl cluster.Cluster) context.Context {
	return context.WithValue(ctx, clusterObjectKey{}, cl)
}

// ClusterObjectFrom returns the cluster object carried by ctx, and whether there was one.
// Reconcilers of mcr controllers get theirs from the manager instead
// (manager.Manager.ClusterFromContext).
func ClusterObjectFrom(ctx context.Context) (cluster.Cluster, bool) {
	cl, ok := ctx.Value(clusterObjectKey{}).(cluster.Cluster)
	return cl, ok && cl != nil
}
