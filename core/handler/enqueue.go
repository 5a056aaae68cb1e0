// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package handler

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	"mcr.dev/core/multicluster"
	mcreconcile "mcr.dev/core/reconcile"
)

// EnqueueRequestForObject enqueues the object the event is about, in the cluster it came from.
// It is itself a per-cluster factory: pass it to builder Watches as is.
func EnqueueRequestForObject(name multicluster.ClusterName, _ cluster.Cluster) EventHandler {
	return TypedForCluster[client.Object](&handler.EnqueueRequestForObject{}, name)
}

// TypedEnqueueRequestForObject is EnqueueRequestForObject for typed objects.
func TypedEnqueueRequestForObject[object client.Object]() TypedEventHandlerFunc[object, mcreconcile.Request] {
	return TypedLift[object](&handler.TypedEnqueueRequestForObject[object]{})
}

// EnqueueRequestForOwner enqueues the owner of the object, in the cluster the event came from.
// Owner references are resolved with that cluster's Scheme and RESTMapper.
func EnqueueRequestForOwner(ownerType client.Object, opts ...handler.OwnerOption) EventHandlerFunc {
	return TypedEnqueueRequestForOwner[client.Object](ownerType, opts...)
}

// TypedEnqueueRequestForOwner is EnqueueRequestForOwner for typed objects.
func TypedEnqueueRequestForOwner[object client.Object](ownerType client.Object, opts ...handler.OwnerOption) TypedEventHandlerFunc[object, mcreconcile.Request] {
	return func(name multicluster.ClusterName, cl cluster.Cluster) handler.TypedEventHandler[object, mcreconcile.Request] {
		h := handler.TypedEnqueueRequestForOwner[object](cl.GetScheme(), cl.GetRESTMapper(), ownerType, opts...)
		return TypedForCluster[object](h, name)
	}
}

// EnqueueRequestsFromMapFunc enqueues the requests fn returns, in the cluster the event came
// from.
func EnqueueRequestsFromMapFunc(fn handler.MapFunc) EventHandlerFunc {
	return TypedLift[client.Object](handler.EnqueueRequestsFromMapFunc(fn))
}

// TypedEnqueueRequestsFromMapFunc enqueues the requests fn returns, rebound to the cluster the
// event came from.
func TypedEnqueueRequestsFromMapFunc[object client.Object, request mcreconcile.ClusterAware[request]](fn handler.TypedMapFunc[object, request]) TypedEventHandlerFunc[object, request] {
	return TypedInjectCluster[object, request](handler.TypedEnqueueRequestsFromMapFunc(fn))
}

// TypedEnqueueRequestsFromMapFuncWithClusterPreservation enqueues the requests fn returns with the
// cluster fn chose. It is the multicluster-runtime form; EnqueueRequestsFromClusterMapFunc also
// tells fn which cluster the event came from.
func TypedEnqueueRequestsFromMapFuncWithClusterPreservation[object client.Object, request mcreconcile.ClusterAware[request]](fn handler.TypedMapFunc[object, request]) handler.TypedEventHandler[object, request] {
	return handler.TypedEnqueueRequestsFromMapFunc(fn)
}

// ClusterMapFunc maps an object of cluster source to requests in any cluster of the fleet.
type ClusterMapFunc[object client.Object, request mcreconcile.ClusterAware[request]] func(ctx context.Context, source multicluster.ClusterName, obj object) []request

// EnqueueRequestsFromClusterMapFunc enqueues the requests fn returns exactly as returned: fn is
// told the cluster the event came from and picks the cluster of every request, so one event can
// fan out to other clusters (including the local one, LocalCluster) or stay in its own.
func EnqueueRequestsFromClusterMapFunc(fn ClusterMapFunc[client.Object, mcreconcile.Request]) EventHandlerFunc {
	return TypedEnqueueRequestsFromClusterMapFunc(fn)
}

// TypedEnqueueRequestsFromClusterMapFunc is EnqueueRequestsFromClusterMapFunc for typed objects
// and requests.
func TypedEnqueueRequestsFromClusterMapFunc[object client.Object, request mcreconcile.ClusterAware[request]](fn ClusterMapFunc[object, request]) TypedEventHandlerFunc[object, request] {
	return func(name multicluster.ClusterName, _ cluster.Cluster) handler.TypedEventHandler[object, request] {
		return handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, obj object) []request {
			return fn(ctx, name, obj)
		})
	}
}

// WithLowPriorityWhenUnchanged gives Create events of the initial list and Update events that did
// not change the object a low priority, as controller-runtime's handler of the same name.
func WithLowPriorityWhenUnchanged[object client.Object, request mcreconcile.ClusterAware[request]](u TypedEventHandlerFunc[object, request]) TypedEventHandlerFunc[object, request] {
	return func(name multicluster.ClusterName, cl cluster.Cluster) handler.TypedEventHandler[object, request] {
		return handler.WithLowPriorityWhenUnchanged(u(name, cl))
	}
}
