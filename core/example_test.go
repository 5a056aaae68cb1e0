// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package mcr_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mcr "mcr.dev/core"
	"mcr.dev/core/providers/clusters"
)

// One import gives a multi-cluster controller: a manager with a provider, and a controller built
// for ConfigMaps of every cluster the provider engages.
func Example() {
	provider := clusters.New(clusters.Options{}) // or any provider of mcr.dev/providers/...
	mgr, err := mcr.NewManager(mcr.GetConfigOrDie(), provider, mcr.Options{})
	if err != nil {
		os.Exit(1)
	}
	err = mcr.NewControllerManagedBy(mgr).
		For(&corev1.ConfigMap{}).
		Complete(mcr.Func(func(ctx context.Context, req mcr.Request) (mcr.Result, error) {
			cl, err := mgr.GetCluster(ctx, req.ClusterName)
			if err != nil {
				return mcr.Result{}, err
			}
			var cm corev1.ConfigMap
			return mcr.Result{}, client.IgnoreNotFound(cl.GetClient().Get(ctx, req.NamespacedName, &cm))
		}))
	if err != nil {
		os.Exit(1)
	}
	if err := mgr.Start(mcr.SetupSignalHandler()); err != nil {
		os.Exit(1)
	}
}

// A reconciler is a plain function of a request that names its cluster, so its logic can be
// called, and tested, without a manager. An error wrapping ErrClusterNotFound means the cluster
// left the fleet: controllers built with NewControllerManagedBy end such a request without retry.
func ExampleFunc() {
	reconciler := mcr.Func(func(_ context.Context, req mcr.Request) (mcr.Result, error) {
		if req.ClusterName == mcr.LocalCluster {
			fmt.Println("host object", req.NamespacedName)
			return mcr.Result{}, nil
		}
		fmt.Println("member object", req)
		return mcr.Result{}, fmt.Errorf("cluster %q: %w", req.ClusterName, mcr.ErrClusterNotFound)
	})

	var req mcr.Request
	req.NamespacedName = types.NamespacedName{Namespace: "shop", Name: "prices"}
	_, _ = reconciler.Reconcile(context.Background(), req)

	req.ClusterName = "eu-west"
	_, err := reconciler.Reconcile(context.Background(), req)
	fmt.Println("gone:", errors.Is(err, mcr.ErrClusterNotFound))
	// Output:
	// host object shop/prices
	// member object cluster://eu-west/shop/prices
	// gone: true
}
