// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package reconcile

import (
	"context"
	"errors"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"mcr.dev/core/multicluster"
)

// Request identifies an object in a cluster of the fleet. The empty ClusterName is the local
// cluster, so a Request with no cluster behaves like a controller-runtime request.
type Request struct {
	reconcile.Request

	// ClusterName is the cluster the object lives in.
	ClusterName multicluster.ClusterName
}

// ClusterAware is the constraint on every request type a multi-cluster controller can process.
type ClusterAware[request comparable] interface {
	comparable
	fmt.Stringer

	// Cluster returns the cluster the request belongs to.
	Cluster() multicluster.ClusterName
	// WithCluster returns a copy of the request bound to another cluster.
	WithCluster(multicluster.ClusterName) request
}

// String returns "cluster://<cluster>/<namespace>/<name>", or the controller-runtime form for the
// local cluster.
func (r Request) String() string {
	if r.ClusterName == "" {
		return r.Request.String()
	}
	return "cluster://" + string(r.ClusterName) + "/" + r.Request.String()
}

// Cluster returns the request's cluster.
func (r Request) Cluster() multicluster.ClusterName { return r.ClusterName }

// WithCluster returns a copy of the request bound to the given cluster.
func (r Request) WithCluster(name multicluster.ClusterName) Request {
	r.ClusterName = name
	return r
}

// WithCluster lifts any comparable request type into a cluster-aware one.
type WithCluster[request comparable] struct {
	Request     request
	ClusterName multicluster.ClusterName
}

// String returns the cluster followed by the wrapped request.
func (w WithCluster[request]) String() string {
	if w.ClusterName == "" {
		return fmt.Sprint(w.Request)
	}
	return fmt.Sprintf("cluster://%s/%v", w.ClusterName, w.Request)
}

// Cluster returns the request's cluster.
func (w WithCluster[request]) Cluster() multicluster.ClusterName { return w.ClusterName }

// WithCluster returns a copy of the request bound to the given cluster.
func (w WithCluster[request]) WithCluster(name multicluster.ClusterName) WithCluster[request] {
	w.ClusterName = name
	return w
}

// Reconciler reconciles objects across the fleet.
type Reconciler = reconcile.TypedReconciler[Request]

// Func is a function that implements Reconciler.
type Func = reconcile.TypedFunc[Request]

// Result is controller-runtime's reconcile.Result.
type Result = reconcile.Result

// ClusterNotFoundWrapper turns an error wrapping multicluster.ErrClusterNotFound into a finished
// request without requeue: the cluster left the fleet while the request was queued, so there is
// nothing left to reconcile.
type ClusterNotFoundWrapper[request comparable] struct {
	wrapped reconcile.TypedReconciler[request]
}

// NewClusterNotFoundWrapper wraps r in a ClusterNotFoundWrapper.
func NewClusterNotFoundWrapper[request comparable](r reconcile.TypedReconciler[request]) reconcile.TypedReconciler[request] {
	return &ClusterNotFoundWrapper[request]{wrapped: r}
}

// Reconcile calls the wrapped reconciler and drops ErrClusterNotFound.
func (w *ClusterNotFoundWrapper[request]) Reconcile(ctx context.Context, req request) (reconcile.Result, error) {
	res, err := w.wrapped.Reconcile(ctx, req)
	if errors.Is(err, multicluster.ErrClusterNotFound) {
		return reconcile.Result{}, nil
	}
	return res, err
}

// String names the wrapped reconciler, for logs.
func (w *ClusterNotFoundWrapper[request]) String() string {
	if s, ok := w.wrapped.(fmt.Stringer); ok {
		return s.String()
	}
	return fmt.Sprintf("%T", w.wrapped)
}

// Unwrap returns the wrapped reconciler.
func (w *ClusterNotFoundWrapper[request]) Unwrap() reconcile.TypedReconciler[request] {
	return w.wrapped
}
