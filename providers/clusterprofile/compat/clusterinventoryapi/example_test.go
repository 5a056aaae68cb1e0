// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterinventoryapi_test

import (
	"context"
	"flag"
	"os"

	corev1 "k8s.io/api/core/v1"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"sigs.k8s.io/cluster-inventory-api/pkg/access"

	mcbuilder "mcr.dev/core/builder"
	mcmanager "mcr.dev/core/manager"
	mcreconcile "mcr.dev/core/reconcile"
	"mcr.dev/providers/clusterprofile/compat/clusterinventoryapi"
	"mcr.dev/providers/clusterprofile/compat/clusterinventoryapi/kubeconfigstrategy"
)

// A program written for multicluster-runtime's cluster-inventory-api provider, after the import
// swap: the operator's access providers from the -clusterprofile-provider-file flag, the
// provider, the manager on the hub, SetupWithManager and a controller over the ClusterProfiles'
// clusters, named "<namespace>/<name>".
func ExampleNew() {
	providerFile := access.SetupProviderFileFlag()
	flag.Parse()
	providers, err := access.NewFromFile(*providerFile)
	if err != nil {
		os.Exit(1)
	}
	provider, err := clusterinventoryapi.New(clusterinventoryapi.Options{
		KubeconfigStrategyOption: kubeconfigstrategy.Option{
			AccessProvider: &kubeconfigstrategy.AccessProviderOption{Provider: providers},
		},
	})
	if err != nil {
		os.Exit(1)
	}
	ctx := ctrl.SetupSignalHandler()
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
			return reconcile.Result{}, cl.GetClient().Get(ctx, req.NamespacedName, cm)
		}))
	if err != nil {
		os.Exit(1)
	}
	if err := mgr.Start(ctx); err != nil && ctx.Err() == nil {
		os.Exit(1)
	}
}
