// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kit

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/clusters"
	"mcr.dev/core/multicluster"
)

// A provider that embeds Members is a multicluster.Provider and a multicluster.ProviderRunnable.
var (
	_ multicluster.Provider         = &Members[string]{}
	_ multicluster.ProviderRunnable = &Members[string]{}
	_ multicluster.StatusReporter   = &Members[string]{}
)

// Members is what a provider embeds to be a provider: the set of engaged members, which supplies
// Get, IndexField and ClusterNames of multicluster.Provider (and ListClusters, the name
// multicluster-runtime's providers use), and Start of multicluster.ProviderRunnable, which runs
// the provider's Engine. The provider's constructor calls Init once.
type Members[K comparable] struct {
	clusters.Clusters[cluster.Cluster]
	engine *Engine[K]
}

// Init builds the provider's Engine over the embedded set: opts.Clusters is set to it, and its
// CacheSyncTimeout and logger follow opts.Options. Call it once, from the provider's constructor.
func (m *Members[K]) Init(opts EngineOptions[K]) (*Engine[K], error) {
	opts.Clusters = &m.Clusters
	e, err := newEngine(opts)
	if err != nil {
		return nil, err
	}
	// newEngine applied the defaults.
	m.Options.CacheSyncTimeout = e.options().CacheSyncTimeout
	// The Engine logs every outcome; the set's own lifecycle lines are detail.
	m.Options.Logger = e.Logger().V(1)
	m.engine = e
	return e, nil
}

// Start runs the provider until ctx ends: it engages members with aware as the provider's
// sources and sync say, and disengages every member before it returns. It fails when a source
// cannot start (a host informer that does not sync within Options.CacheSyncTimeout, say), when a
// host the provider runs itself stops, and when called twice. The manager calls Start; users do
// not.
func (m *Members[K]) Start(ctx context.Context, aware multicluster.Aware) error {
	if m.engine == nil {
		return errNotInitialized
	}
	return m.engine.run(ctx, aware)
}

// FleetStatus reports whether the provider has synced its first list of members, and which
// members fail; see multicluster.StatusReporter.
func (m *Members[K]) FleetStatus() multicluster.FleetStatus {
	if m.engine == nil {
		return multicluster.FleetStatus{}
	}
	return m.engine.status()
}

// ListClusters returns the names of the engaged members, sorted: ClusterNames under the name
// multicluster-runtime's providers use.
func (m *Members[K]) ListClusters() []multicluster.ClusterName { return m.ClusterNames() }
