// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// The utility providers and the sharded coordinator in multicluster-runtime v0.24.1's style.
package main

import (
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	"sigs.k8s.io/multicluster-runtime/pkg/manager/coordinator/sharded"
	"sigs.k8s.io/multicluster-runtime/providers/clusters"
	"sigs.k8s.io/multicluster-runtime/providers/multi"
	"sigs.k8s.io/multicluster-runtime/providers/namespace"
	nop "sigs.k8s.io/multicluster-runtime/providers/nop" // upstream names the package namespace
	"sigs.k8s.io/multicluster-runtime/providers/single"
)

func main() {
	ctx := ctrl.SetupSignalHandler()
	cfg := ctrl.GetConfigOrDie()
	host, err := cluster.New(cfg)
	if err != nil {
		os.Exit(1)
	}

	fleet := multi.New(multi.Options{Separator: "/"})
	static := clusters.New()
	if err := static.Add(ctx, "edge", host); err != nil {
		os.Exit(1)
	}
	if err := fleet.AddProvider("namespaces", namespace.New(host)); err != nil {
		os.Exit(1)
	}
	if err := fleet.AddProvider("host", single.New("host", host)); err != nil {
		os.Exit(1)
	}
	if err := fleet.AddProvider("static", static); err != nil {
		os.Exit(1)
	}
	if err := fleet.AddProvider("none", nop.New()); err != nil {
		os.Exit(1)
	}

	kube, err := client.New(cfg, client.Options{})
	if err != nil {
		os.Exit(1)
	}
	mgr, err := mcmanager.New(cfg, fleet, manager.Options{},
		mcmanager.WithCoordinator(sharded.New(kube, ctrl.Log.WithName("sharded"),
			sharded.WithShardLease("kube-system", "my-controller"),
			sharded.WithPerClusterLease(true),
			sharded.WithPeerWeight(2),
		)))
	if err != nil {
		os.Exit(1)
	}
	if err := mgr.GetLocalManager().Add(host); err != nil {
		os.Exit(1)
	}
	if err := mgr.Start(ctx); err != nil {
		os.Exit(1)
	}
}
