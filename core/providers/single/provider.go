// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package single

import (
	"context"
	"errors"
	"fmt"
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
	// AlreadyRunning says the cluster is started and stopped by someone else, for example
	// because it was added to the manager as a runnable. The provider then only waits for its
	// cache to sync before engaging it.
	//
	// Defaults to false: Start starts the cluster and stops it when Start returns.
	AlreadyRunning bool

	// CacheSyncTimeout bounds the wait for the cluster's cache to sync in Start.
	//
	// Defaults to clusters.DefaultCacheSyncTimeout (one minute).
	CacheSyncTimeout time.Duration

	// Logger receives lifecycle messages, with the cluster under the key "cluster".
	//
	// Defaults to Log, else to controller-runtime's logger named "single-provider".
	Logger logr.Logger

	// Log is the former name of Logger, used when Logger is unset.
	//
	// Deprecated: use Logger.
	Log logr.Logger
}

// Provider serves one cluster under one name. Create it with New.
type Provider struct {
	// The embedded set supplies Get and IndexField; it holds at most the one cluster.
	clusters.Clusters[cluster.Cluster]

	name           multicluster.ClusterName
	cluster        cluster.Cluster
	alreadyRunning bool

	mu      sync.Mutex
	started bool
}

// New returns a provider that serves cl under name. Options, at most one (New(name, cl) is
// multicluster-runtime's spelling), are defaulted here.
func New(name multicluster.ClusterName, cl cluster.Cluster, options ...Options) *Provider {
	opts := clusters.OneOptions("single.New", options)
	p := &Provider{name: name, cluster: cl, alreadyRunning: opts.AlreadyRunning}
	if opts.Logger.GetSink() == nil {
		opts.Logger = opts.Log
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = ctrllog.Log.WithName("single-provider")
	}
	p.Options = clusters.Options[cluster.Cluster]{CacheSyncTimeout: opts.CacheSyncTimeout, Logger: opts.Logger}
	return p
}

// Start engages the cluster with aware and blocks until ctx ends, then disengages it. It fails
// if the cluster cannot be started, synced or engaged, and when called a second time.
func (p *Provider) Start(ctx context.Context, aware multicluster.Aware) error {
	p.mu.Lock()
	if p.started {
		p.mu.Unlock()
		return errors.New("single provider: Start called twice")
	}
	p.started = true
	p.mu.Unlock()

	var opts []clusters.AddOption
	if p.alreadyRunning {
		opts = append(opts, clusters.AlreadyRunning())
	}
	if err := p.Add(ctx, p.name, p.cluster, aware, opts...); err != nil {
		return fmt.Errorf("single provider: %w", err)
	}
	<-ctx.Done()
	p.Remove(p.name)
	return nil
}
