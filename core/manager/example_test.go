// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package manager_test

import (
	"context"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
	upstreamkubeconfig "sigs.k8s.io/multicluster-runtime/providers/kubeconfig"

	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/providers/nop"
)

// A manager needs the host cluster's config and a provider. With a nil provider it runs the same
// controllers against the local cluster only.
func ExampleNew() {
	ctx := ctrl.SetupSignalHandler()
	cfg, err := ctrl.GetConfig()
	if err != nil {
		os.Exit(1)
	}
	mgr, err := mcmanager.New(cfg, nop.New(), mcmanager.Options{}, mcmanager.WithLocalClusterEngaged())
	if err != nil {
		os.Exit(1)
	}
	// ... add controllers with mcbuilder.ControllerManagedBy(mgr) ...
	if err := mgr.Start(ctx); err != nil && ctx.Err() == nil {
		os.Exit(1)
	}
}

// Single-cluster code can run against any cluster of the fleet through a scoped manager.
func ExampleManager_GetManager() {
	mgr := managerFromSomewhere()
	scoped, err := mgr.GetManager(context.Background(), "eu-west")
	if err != nil {
		return
	}
	_ = scoped.GetClient() // the client of cluster eu-west
}

func managerFromSomewhere() mcmanager.Manager {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		os.Exit(1)
	}
	mgr, err := mcmanager.New(cfg, nop.New(), mcmanager.Options{})
	if err != nil {
		os.Exit(1)
	}
	return mgr
}

// A provider compiled against sigs.k8s.io/multicluster-runtime, whose SetupWithManager takes
// upstream's Manager, runs under mcr's manager through Upstream.
func ExampleUpstream() {
	ctx := ctrl.SetupSignalHandler()
	cfg, err := ctrl.GetConfig()
	if err != nil {
		os.Exit(1)
	}
	provider := upstreamkubeconfig.New(upstreamkubeconfig.Options{Namespace: "mcr-system"})
	mgr, err := mcmanager.New(cfg, provider, mcmanager.Options{})
	if err != nil {
		os.Exit(1)
	}
	if err := provider.SetupWithManager(ctx, mcmanager.Upstream(mgr)); err != nil {
		os.Exit(1)
	}
	if err := mgr.Start(ctx); err != nil && ctx.Err() == nil {
		os.Exit(1)
	}
}
