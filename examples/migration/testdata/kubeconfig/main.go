// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// multicluster-runtime v0.24.1's kubeconfig provider as its documentation shows it: New, the
// manager, SetupWithManager, and a controller over the Secrets' clusters.
package main

import (
	"context"
	"os"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"
	kubeconfigprovider "sigs.k8s.io/multicluster-runtime/providers/kubeconfig"
)

func main() {
	ctx := ctrl.SetupSignalHandler()
	provider := kubeconfigprovider.New(kubeconfigprovider.Options{
		Namespace:             "fleet-system",
		KubeconfigSecretLabel: kubeconfigprovider.DefaultKubeconfigSecretLabel,
		KubeconfigSecretKey:   kubeconfigprovider.DefaultKubeconfigSecretKey,
		ClusterOptions:        []cluster.Option{func(o *cluster.Options) { o.Cache.DefaultNamespaces = nil }},
		RESTOptions:           []func(*rest.Config) error{func(cfg *rest.Config) error { cfg.QPS = 50; return nil }},
	})
	mgr, err := mcmanager.New(ctrl.GetConfigOrDie(), provider, mcmanager.Options{})
	if err != nil {
		os.Exit(1)
	}
	if err := provider.SetupWithManager(ctx, mgr); err != nil {
		os.Exit(1)
	}
	err = mcbuilder.ControllerManagedBy(mgr).Named("configmaps").For(&corev1.ConfigMap{}).
		Complete(mcreconcile.Func(func(ctx context.Context, req mcreconcile.Request) (reconcile.Result, error) {
			cl, err := provider.Get(ctx, req.ClusterName)
			if err != nil {
				return reconcile.Result{}, err
			}
			_ = cl.GetClient()
			_ = provider.ListClusters()
			return reconcile.Result{}, nil
		}))
	if err != nil {
		os.Exit(1)
	}
	if err := mgr.Start(ctx); err != nil {
		os.Exit(1)
	}
}
