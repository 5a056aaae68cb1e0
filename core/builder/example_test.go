// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package builder_test

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	mcbuilder "mcr.dev/core/builder"
	mchandler "mcr.dev/core/handler"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
	mcreconcile "mcr.dev/core/reconcile"
)

// A uniform controller: the same logic in every cluster of the fleet. It reconciles Deployments
// and the ReplicaSets they own, in whichever cluster they live.
func Example_uniform() {
	var mgr mcmanager.Manager // from mcmanager.New(cfg, provider, opts)

	_ = mcbuilder.ControllerManagedBy(mgr).
		For(&appsv1.Deployment{}).
		Owns(&appsv1.ReplicaSet{}).
		WithEventFilter(predicate.GenerationChangedPredicate{}).
		Complete(mcreconcile.Func(func(ctx context.Context, req mcreconcile.Request) (reconcile.Result, error) {
			cl, err := mgr.GetCluster(ctx, req.ClusterName)
			if err != nil {
				return reconcile.Result{}, err
			}
			var d appsv1.Deployment
			return reconcile.Result{}, client.IgnoreNotFound(cl.GetClient().Get(ctx, req.NamespacedName, &d))
		}))
}

// A multi-cluster-aware controller: a source object in the local (host) cluster, derived objects
// in every member. Events of members are mapped back to the host object.
func Example_multiClusterAware() {
	var mgr mcmanager.Manager // from mcmanager.New(cfg, provider, opts, mcmanager.WithLocalClusterEngaged())

	_ = mcbuilder.ControllerManagedBy(mgr).
		Named("config-distributor").
		// The source of truth lives in the local cluster only.
		For(&corev1.ConfigMap{}, mcbuilder.WithEngageWithLocalCluster(true), mcbuilder.WithEngageWithProviderClusters(false)).
		// Copies in the members enqueue the host object they came from.
		Watches(&corev1.ConfigMap{}, mchandler.EnqueueRequestsFromClusterMapFunc(
			func(_ context.Context, _ multicluster.ClusterName, replica client.Object) []mcreconcile.Request {
				var r mcreconcile.Request // ClusterName "" is the local cluster
				r.Namespace, r.Name = replica.GetNamespace(), replica.GetName()
				return []mcreconcile.Request{r}
			}),
			mcbuilder.WithEngageWithLocalCluster(false)).
		Complete(mcreconcile.Func(func(context.Context, mcreconcile.Request) (reconcile.Result, error) {
			// Read the host object, then create or update its copy in every member.
			return reconcile.Result{}, nil
		}))
}
