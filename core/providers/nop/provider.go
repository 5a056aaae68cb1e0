// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package nop

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/multicluster"
)

var (
	_ multicluster.Provider         = &Provider{}
	_ multicluster.ProviderRunnable = &Provider{}
)

// Provider is a provider with zero clusters. The zero value is ready to use.
type Provider struct{}

// New returns a provider with zero clusters.
func New() *Provider {
	return &Provider{}
}

// Start engages nothing and blocks until ctx ends.
func (p *Provider) Start(ctx context.Context, _ multicluster.Aware) error {
	<-ctx.Done()
	return nil
}

// Get returns an error wrapping multicluster.ErrClusterNotFound for every name.
func (p *Provider) Get(_ context.Context, name multicluster.ClusterName) (cluster.Cluster, error) {
	return nil, fmt.Errorf("nop provider has no cluster %q: %w", name, multicluster.ErrClusterNotFound)
}

// IndexField does nothing: there is no cluster to index, now or later.
func (p *Provider) IndexField(context.Context, client.Object, string, client.IndexerFunc) error {
	return nil
}
