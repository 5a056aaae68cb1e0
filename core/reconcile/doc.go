// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package reconcile defines the multi-cluster request: a controller-runtime reconcile.Request
// plus the name of the cluster the object lives in. Reconcilers of a multi-cluster controller
// receive a Request and look the cluster up through the manager:
//
//	func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
//		cl, err := r.Manager.GetCluster(ctx, req.ClusterName)
//		if err != nil {
//			return ctrl.Result{}, err // a vanished cluster ends the request quietly, see ClusterNotFoundWrapper
//		}
//		...
//	}
//
// Custom request types become cluster-aware by implementing ClusterAware, or by being wrapped in
// WithCluster.
package reconcile
