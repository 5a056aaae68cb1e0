// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// A controller program in multicluster-runtime v0.24.1's style: the builder with For, Owns and
// Watches and their options, handlers, a raw source, controller options, custom requests, and
// the cluster in the context.
package main

import (
	"context"
	"os"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mccontext "sigs.k8s.io/multicluster-runtime/pkg/context"
	mccontroller "sigs.k8s.io/multicluster-runtime/pkg/controller"
	mchandler "sigs.k8s.io/multicluster-runtime/pkg/handler"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"
	mcsource "sigs.k8s.io/multicluster-runtime/pkg/source"
	"sigs.k8s.io/multicluster-runtime/providers/clusters"
)

// shardKey is a request type of the program's own.
type shardKey = mcreconcile.WithCluster[string]

func main() {
	ctx := ctrl.SetupSignalHandler()
	cfg := ctrl.GetConfigOrDie()
	provider := clusters.New()
	mgr, err := mcmanager.New(cfg, provider, manager.Options{})
	if err != nil {
		os.Exit(1)
	}

	onlyProd := func(name multicluster.ClusterName, _ cluster.Cluster) bool { return name != "staging" }
	err = mcbuilder.ControllerManagedBy(mgr).
		Named("deployments").
		For(&appsv1.Deployment{},
			mcbuilder.WithEngageWithLocalCluster(false),
			mcbuilder.WithEngageWithProviderClusters(true),
			mcbuilder.WithClusterFilter(onlyProd),
			mcbuilder.WithPredicates(predicate.GenerationChangedPredicate{}),
		).
		Owns(&appsv1.ReplicaSet{}, mcbuilder.MatchEveryOwner).
		Watches(&corev1.ConfigMap{}, mchandler.EnqueueRequestForObject).
		Watches(&corev1.Secret{}, mchandler.TypedEnqueueRequestsFromMapFunc[client.Object, mcreconcile.Request](
			func(_ context.Context, obj client.Object) []mcreconcile.Request {
				return []mcreconcile.Request{{Request: reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)}}}
			})).
		WithEventFilter(predicate.ResourceVersionChangedPredicate{}).
		WithOptions(mccontroller.Options{MaxConcurrentReconciles: 4}).
		Complete(mcreconcile.Func(func(ctx context.Context, req mcreconcile.Request) (ctrl.Result, error) {
			cl, err := mgr.GetCluster(ctx, req.ClusterName)
			if err != nil {
				return ctrl.Result{}, err
			}
			var d appsv1.Deployment
			return ctrl.Result{}, client.IgnoreNotFound(cl.GetClient().Get(ctx, req.NamespacedName, &d))
		}))
	if err != nil {
		os.Exit(1)
	}

	// A single-cluster reconciler made multi-cluster through the context.
	single := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		cl, err := mgr.ClusterFromContext(ctx)
		if err != nil {
			return reconcile.Result{}, err
		}
		_ = cl.GetClient()
		return reconcile.Result{}, nil
	})
	if err := mcbuilder.ControllerManagedBy(mgr).Named("configmaps").For(&corev1.ConfigMap{}).
		Complete(mccontext.ReconcilerWithClusterInContext(single)); err != nil {
		os.Exit(1)
	}

	// A controller built by hand, with a source of its own and a custom request type.
	c, err := mccontroller.NewTyped[shardKey]("shards", mgr, controller.TypedOptions[shardKey]{
		Reconciler: reconcile.TypedFunc[shardKey](func(context.Context, shardKey) (reconcile.Result, error) {
			return reconcile.Result{}, nil
		}),
	})
	if err != nil {
		os.Exit(1)
	}
	src := mcsource.TypedKind[*corev1.Namespace, shardKey](&corev1.Namespace{},
		func(name multicluster.ClusterName, _ cluster.Cluster) handler.TypedEventHandler[*corev1.Namespace, shardKey] {
			return handler.TypedEnqueueRequestsFromMapFunc[*corev1.Namespace, shardKey](func(_ context.Context, ns *corev1.Namespace) []shardKey {
				return []shardKey{{Request: ns.Name, ClusterName: name}}
			})
		}).WithClusterFilter(onlyProd)
	if err := c.MultiClusterWatch(src); err != nil {
		os.Exit(1)
	}

	if err := mgr.Start(ctx); err != nil {
		os.Exit(1)
	}
}
