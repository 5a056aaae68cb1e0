// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusters

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"sigs.k8s.io/controller-runtime/pkg/cluster"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"mcr.dev/core/clusters"
	"mcr.dev/core/multicluster"
)

var (
	_ multicluster.Provider         = &Provider{}
	_ multicluster.ProviderRunnable = &Provider{}
)

// Options configures a Provider. The zero value of every field selects its default.
type Options struct {
	// CacheSyncTimeout bounds how long a newly added cluster may take to sync its cache.
	//
	// Defaults to clusters.DefaultCacheSyncTimeout (one minute).
	CacheSyncTimeout time.Duration

	// EqualClusters tells AddOrReplace whether a cluster is the one already engaged.
	//
	// Defaults to clusters.EqualClusters (same endpoint and credentials).
	EqualClusters func(a, b cluster.Cluster) bool

	// Logger receives lifecycle messages, with the cluster under the key "cluster".
	//
	// Defaults to Log, else to controller-runtime's logger named "clusters-provider".
	Logger logr.Logger

	// Log is the former name of Logger, used when Logger is unset.
	//
	// Deprecated: use Logger.
	Log logr.Logger
}

// Provider engages the clusters it is given. Create it with New.
type Provider struct {
	// The embedded set supplies Get and IndexField.
	clusters.Clusters[cluster.Cluster]

	log logr.Logger

	mu       sync.Mutex
	startCtx context.Context // nil until Start
	aware    multicluster.Aware
	parked   map[multicluster.ClusterName]cluster.Cluster
}

// New returns a provider without clusters. Options, at most one (New() is
// multicluster-runtime's spelling), are defaulted here.
func New(options ...Options) *Provider {
	opts := clusters.OneOptions("clusters.New", options)
	if opts.Logger.GetSink() == nil {
		opts.Logger = opts.Log
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = ctrllog.Log.WithName("clusters-provider")
	}
	p := &Provider{log: opts.Logger, parked: map[multicluster.ClusterName]cluster.Cluster{}}
	p.Options = clusters.Options[cluster.Cluster]{
		CacheSyncTimeout: opts.CacheSyncTimeout,
		EqualClusters:    opts.EqualClusters,
		Logger:           opts.Logger,
	}
	return p
}

// Start engages the parked clusters, concurrently, and then every cluster added later; it blocks
// until ctx ends and returns once every cluster has stopped. A parked cluster that fails is
// logged and dropped. Start may be called only once.
func (p *Provider) Start(ctx context.Context, aware multicluster.Aware) error {
	p.mu.Lock()
	if p.startCtx != nil {
		p.mu.Unlock()
		return errors.New("clusters provider: Start called twice")
	}
	p.startCtx, p.aware = ctx, aware
	parked := p.parked
	p.parked = nil
	p.mu.Unlock()

	var wg sync.WaitGroup
	for _, name := range slices.Sorted(maps.Keys(parked)) {
		wg.Go(func() {
			if err := p.Clusters.Add(ctx, name, parked[name], aware); err != nil {
				p.log.Error(err, "Failed to engage a cluster added before Start", "cluster", name)
			}
		})
	}
	wg.Wait()
	<-ctx.Done()
	p.RemoveAll()
	return nil
}

// Add adds cl under name. Before Start, cl is parked and engaged when Start runs; the only error
// is a name already parked. After Start, Add returns once cl is engaged, or with the reason it
// could not be (see clusters.Clusters.Add). ctx only aborts the call if already done: the
// cluster's lifetime follows Start's context.
func (p *Provider) Add(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster) error {
	return p.add(ctx, name, cl, false)
}

// AddOrReplace adds cl, or replaces the cluster of that name if it differs according to
// Options.EqualClusters; see clusters.Clusters.AddOrReplace for the order of a replacement.
func (p *Provider) AddOrReplace(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster) error {
	return p.add(ctx, name, cl, true)
}

func (p *Provider) add(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster, replace bool) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("adding cluster %q: %w", name, err)
	}
	p.mu.Lock()
	startCtx, aware := p.startCtx, p.aware
	if startCtx == nil {
		defer p.mu.Unlock()
		if _, exists := p.parked[name]; exists && !replace {
			return fmt.Errorf("adding cluster %q: %w", name, clusters.ErrClusterExists)
		}
		p.parked[name] = cl
		return nil
	}
	p.mu.Unlock()

	if replace {
		return p.Clusters.AddOrReplace(startCtx, name, cl, aware)
	}
	return p.Clusters.Add(startCtx, name, cl, aware)
}

// Remove disengages and stops the named cluster (or unparks it before Start), and returns once
// it has stopped.
func (p *Provider) Remove(name multicluster.ClusterName) {
	p.mu.Lock()
	if p.startCtx == nil {
		delete(p.parked, name)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	p.Clusters.Remove(name)
}
