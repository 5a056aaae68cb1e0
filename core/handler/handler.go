// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package handler

import (
	"context"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"mcr.dev/core/multicluster"
	mcreconcile "mcr.dev/core/reconcile"
)

// EventHandler is a handler that enqueues multi-cluster requests.
type EventHandler = handler.TypedEventHandler[client.Object, mcreconcile.Request]

// TypedEventHandlerFunc builds the handler for one engaged cluster.
type TypedEventHandlerFunc[object client.Object, request mcreconcile.ClusterAware[request]] func(multicluster.ClusterName, cluster.Cluster) handler.TypedEventHandler[object, request]

// EventHandlerFunc builds the handler for one engaged cluster.
type EventHandlerFunc = TypedEventHandlerFunc[client.Object, mcreconcile.Request]

// Lift turns a single-cluster handler into a per-cluster factory: every request it enqueues
// carries the cluster the event came from.
func Lift(h handler.EventHandler) EventHandlerFunc {
	return TypedLift[client.Object](h)
}

// TypedLift is Lift for typed handlers.
func TypedLift[object client.Object](h handler.TypedEventHandler[object, reconcile.Request]) TypedEventHandlerFunc[object, mcreconcile.Request] {
	return func(name multicluster.ClusterName, _ cluster.Cluster) handler.TypedEventHandler[object, mcreconcile.Request] {
		return TypedForCluster[object](h, name)
	}
}

// ForCluster binds a single-cluster handler to one fixed cluster.
func ForCluster(h handler.EventHandler, name multicluster.ClusterName) EventHandler {
	return TypedForCluster[client.Object](h, name)
}

// TypedForCluster is ForCluster for typed handlers.
func TypedForCluster[object client.Object](h handler.TypedEventHandler[object, reconcile.Request], name multicluster.ClusterName) handler.TypedEventHandler[object, mcreconcile.Request] {
	return &clusterHandler[object]{handler: h, cluster: name}
}

type clusterHandler[object client.Object] struct {
	handler handler.TypedEventHandler[object, reconcile.Request]
	cluster multicluster.ClusterName
}

func (h *clusterHandler[object]) Create(ctx context.Context, e event.TypedCreateEvent[object], q workqueue.TypedRateLimitingInterface[mcreconcile.Request]) {
	h.handler.Create(ctx, e, injectCluster(q, h.cluster))
}

func (h *clusterHandler[object]) Update(ctx context.Context, e event.TypedUpdateEvent[object], q workqueue.TypedRateLimitingInterface[mcreconcile.Request]) {
	h.handler.Update(ctx, e, injectCluster(q, h.cluster))
}

func (h *clusterHandler[object]) Delete(ctx context.Context, e event.TypedDeleteEvent[object], q workqueue.TypedRateLimitingInterface[mcreconcile.Request]) {
	h.handler.Delete(ctx, e, injectCluster(q, h.cluster))
}

func (h *clusterHandler[object]) Generic(ctx context.Context, e event.TypedGenericEvent[object], q workqueue.TypedRateLimitingInterface[mcreconcile.Request]) {
	h.handler.Generic(ctx, e, injectCluster(q, h.cluster))
}

// TypedInjectCluster wraps a handler that already emits cluster-aware requests: every request is
// rebound to the cluster the event came from.
func TypedInjectCluster[object client.Object, request mcreconcile.ClusterAware[request]](h handler.TypedEventHandler[object, request]) TypedEventHandlerFunc[object, request] {
	return func(name multicluster.ClusterName, _ cluster.Cluster) handler.TypedEventHandler[object, request] {
		return &rebindHandler[object, request]{handler: h, cluster: name}
	}
}

type rebindHandler[object client.Object, request mcreconcile.ClusterAware[request]] struct {
	handler handler.TypedEventHandler[object, request]
	cluster multicluster.ClusterName
}

func (h *rebindHandler[object, request]) Create(ctx context.Context, e event.TypedCreateEvent[object], q workqueue.TypedRateLimitingInterface[request]) {
	h.handler.Create(ctx, e, rebindCluster(q, h.cluster))
}

func (h *rebindHandler[object, request]) Update(ctx context.Context, e event.TypedUpdateEvent[object], q workqueue.TypedRateLimitingInterface[request]) {
	h.handler.Update(ctx, e, rebindCluster(q, h.cluster))
}

func (h *rebindHandler[object, request]) Delete(ctx context.Context, e event.TypedDeleteEvent[object], q workqueue.TypedRateLimitingInterface[request]) {
	h.handler.Delete(ctx, e, rebindCluster(q, h.cluster))
}

func (h *rebindHandler[object, request]) Generic(ctx context.Context, e event.TypedGenericEvent[object], q workqueue.TypedRateLimitingInterface[request]) {
	h.handler.Generic(ctx, e, rebindCluster(q, h.cluster))
}
