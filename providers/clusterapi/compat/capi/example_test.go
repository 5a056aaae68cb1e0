// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package capi_test

import (
	"context"
	"os"

	corev1 "k8s.io/api/core/v1"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	mcbuilder "mcr.dev/core/builder"
	mcmanager "mcr.dev/core/manager"
	mcreconcile "mcr.dev/core/reconcile"
	"mcr.dev/providers/clusterapi/compat/capi"
)

// A program written for multicluster-runtime's Cluster API provider, after the import swap: the
// provider, the manager on the management cluster, SetupWithManager and a controller over the
// workload clusters, named "<namespace>/<name>" after their Cluster objects.
func ExampleNew() {
	ctx := ctrl.SetupSignalHandler()
	provider := capi.New(capi.Options{})
	mgr, err := mcmanager.New(ctrl.GetConfigOrDie(), provider, mcmanager.Options{})
	if err != nil {
		os.Exit(1)
	}
	if err := provider.SetupWithManager(mgr); err != nil {
		os.Exit(1)
	}
	err = mcbuilder.ControllerManagedBy(mgr).Named("configmaps").For(&corev1.ConfigMap{}).
		Complete(mcreconcile.Func(func(ctx context.Context, req mcreconcile.Request) (reconcile.Result, error) {
			cl, err := mgr.GetCluster(ctx, req.ClusterName)
			if err != nil {
				return reconcile.Result{}, err
			}
			cm := &corev1.ConfigMap{}
			return reconcile.Result{}, client.IgnoreNotFound(cl.GetClient().Get(ctx, req.NamespacedName, cm))
		}))
	if err != nil {
		os.Exit(1)
	}
	if err := mgr.Start(ctx); err != nil && ctx.Err() == nil {
		os.Exit(1)
	}
}
