// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package manager_test

import (
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"mcr.dev/core/clusters"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/nop"
)

// The fleet debug endpoint answers on the metrics server what on-call asks first: which
// clusters are engaged, since when, synced or not, owned by which replica, and why the others
// fail.
func ExampleAddFleetDebugHandler() {
	if err := addFleetDebug(managerFromSomewhere()); err != nil {
		os.Exit(1)
	}
}

func addFleetDebug(mgr mcmanager.Manager) error {
	// Served beside /metrics, behind the same authentication and authorization
	// (Options.Metrics.FilterProvider), until the manager stops.
	return mcmanager.AddFleetDebugHandler(mgr, mcmanager.DefaultFleetDebugPath)
}

// Cluster defaults are set once on the manager; every provider built on the provider kit, and
// the local cluster, inherit what their own options leave unset.
func ExampleWithClusterDefaults() {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		os.Exit(1)
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		os.Exit(1)
	}
	// ... and the AddToScheme of every CRD type the controllers use ...
	if _, err := newManagerWithClusterDefaults(cfg, nop.New(), scheme); err != nil {
		os.Exit(1)
	}
}

func newManagerWithClusterDefaults(cfg *rest.Config, provider multicluster.Provider, scheme *runtime.Scheme) (mcmanager.Manager, error) {
	return mcmanager.New(cfg, provider, mcmanager.Options{}, mcmanager.WithClusterDefaults(clusters.Defaults{
		// Every type the controllers read in any member, CRD types included.
		Scheme: scheme,
		// Cache only the namespace the controllers work in, in every member.
		Cache: cache.Options{DefaultNamespaces: map[string]cache.Config{"apps": {}}},
		// Client-side rate limits of each member's client (and the local one's, if unset).
		QPS:   50,
		Burst: 100,
	}))
}
