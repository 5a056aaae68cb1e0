// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package restmapper_test

import (
	"os"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/clusters"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/nop"
	"mcr.dev/core/restmapper"
)

// Every member the manager's provider engages, and the local cluster, get their REST mapper
// from one Pool of the program's own: members behind one endpoint share a mapper, whatever
// their credentials.
func ExamplePool() {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		os.Exit(1)
	}
	if _, err := newManagerSharingMappers(cfg, nop.New()); err != nil {
		os.Exit(1)
	}
}

func newManagerSharingMappers(cfg *rest.Config, provider multicluster.Provider) (mcmanager.Manager, error) {
	return mcmanager.New(cfg, provider, mcmanager.Options{}, mcmanager.WithClusterDefaults(clusters.Defaults{
		RESTMappers: restmapper.NewPool(restmapper.Options{}),
	}))
}

// Members share REST mappers per endpoint by default (Default). Behind a proxy that routes by
// the client's token, give every member a mapper of its own.
func ExampleOwn() {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		os.Exit(1)
	}
	if _, err := newManagerWithOwnMappers(cfg, nop.New()); err != nil {
		os.Exit(1)
	}
}

func newManagerWithOwnMappers(cfg *rest.Config, provider multicluster.Provider) (mcmanager.Manager, error) {
	return mcmanager.New(cfg, provider, mcmanager.Options{}, mcmanager.WithClusterDefaults(clusters.Defaults{
		OwnRESTMappers: true,
	}))
}

// One cluster built by hand (or a provider's Options.ClusterOptions) takes the Pool as a
// cluster.Option.
func ExamplePool_ClusterOption() {
	pool := restmapper.NewPool(restmapper.Options{})
	cfg, err := ctrl.GetConfig()
	if err != nil {
		os.Exit(1)
	}
	if _, err := cluster.New(cfg, pool.ClusterOption()); err != nil {
		os.Exit(1)
	}
}
