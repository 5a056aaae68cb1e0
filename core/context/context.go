// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package context

import (
	"context"

	ctrlreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"mcr.dev/core/multicluster"
	"mcr.dev/core/reconcile"
)

type clusterKey struct{}

// WithCluster returns a copy of ctx that carries the cluster name.
func WithCluster(ctx context.Context, name multicluster.ClusterName) context.Context {
	return context.WithValue(ctx, clusterKey{}, name)
}

// ClusterFrom returns the cluster name carried by ctx, and whether there was one.
func ClusterFrom(ctx context.Context) (multicluster.ClusterName, bool) {
	name, ok := ctx.Value(clusterKey{}).(multicluster.ClusterName)
	return name, ok
}

// ReconcilerWithClusterInContext adapts a single-cluster reconciler: the request's cluster goes
// into the context, the plain request to the reconciler.
func ReconcilerWithClusterInContext(r ctrlreconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (ctrlreconcile.Result, error) {
		return r.Reconcile(WithCluster(ctx, req.ClusterName), req.Request)
	})
}
