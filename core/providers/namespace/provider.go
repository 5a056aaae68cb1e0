// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package namespace

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/clusters"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
)

// providerName names the provider's logger and queue.
const providerName = "namespace-provider"

var (
	_ multicluster.Provider         = &Provider{}
	_ multicluster.ProviderRunnable = &Provider{}
	_ multicluster.StatusReporter   = &Provider{}
)

// Options configures a Provider. The zero value of every field selects its default.
type Options struct {
	// CacheSyncTimeout bounds how long engaging a namespace waits for the host cache to sync,
	// and how long Start waits for the host's Namespaces to sync.
	//
	// Defaults to clusters.DefaultCacheSyncTimeout (one minute).
	CacheSyncTimeout time.Duration

	// Logger receives lifecycle messages, with the cluster under the key "cluster".
	//
	// Defaults to Log, else to controller-runtime's logger named "namespace-provider".
	Logger logr.Logger

	// Log is the former name of Logger, used when Logger is unset.
	//
	// Deprecated: use Logger.
	Log logr.Logger
}

// Provider engages every Namespace of a host cluster as a cluster. Create it with New.
type Provider struct {
	// Members supplies Get, ClusterNames, ListClusters, FleetStatus and Start, which runs the
	// engine: a namespace that cannot be engaged is retried with backoff, and every engaged
	// namespace is resynced periodically.
	kit.Members[string]

	host   cluster.Cluster
	engine *kit.Engine[string]

	mu        sync.Mutex
	indexKeys map[string]struct{}

	dispatchMu  sync.Mutex
	dispatchers map[cache.Informer]*dispatcher
}

// New returns a provider for the namespaces of host. host must be started by its owner, for
// example by being the manager's local cluster; the provider only reads from it. Options, at
// most one (New(host) is multicluster-runtime's spelling), are defaulted here.
func New(host cluster.Cluster, options ...Options) *Provider {
	opts := clusters.OneOptions("namespace.New", options)
	logger := opts.Logger
	if logger.GetSink() == nil {
		logger = opts.Log
	}
	return newProvider(host, kit.Options{CacheSyncTimeout: opts.CacheSyncTimeout, Logger: logger})
}

// newProvider returns a provider with the kit's options, which tests shorten.
func newProvider(host cluster.Cluster, opts kit.Options) *Provider {
	p := &Provider{
		host:        host,
		indexKeys:   map[string]struct{}{},
		dispatchers: map[cache.Informer]*dispatcher{},
	}
	// Init fails only without a name, a set or a sync, all given here. No Host: the host is
	// run by its owner, and the provider records no Events (it only reads from the host).
	p.engine, _ = p.Init(kit.EngineOptions[string]{
		Name:    providerName,
		Options: opts,
		Sync:    p.sync,
		Sources: []kit.Source[string]{namespaceSource{p}},
		Subject: "Namespace",
	})
	return p
}

// namespaceSource queues the name of every Namespace of the host that is added, updated or
// deleted (tombstones included). It reads the host's cache only once started, so that New does
// not touch the host.
type namespaceSource struct{ p *Provider }

func (s namespaceSource) Start(ctx context.Context, e *kit.Engine[string]) (stop func(), err error) {
	return kit.HostObjects[string]{
		Informers: s.p.host.GetCache(),
		Watches: []kit.Watch[string]{{
			Object:   &corev1.Namespace{},
			Kind:     "Namespaces",
			Keys:     func(obj client.Object) []string { return []string{obj.GetName()} },
			SyncHint: "can the host's client list and watch Namespaces?",
		}},
	}.Start(ctx, e)
}

// sync engages the namespace name while it exists and is not terminating, and disengages it
// otherwise. Disengaging at the deletionTimestamp rather than at the final delete stops
// controllers from fighting the namespace controller while it empties the namespace.
func (p *Provider) sync(ctx context.Context, name string) kit.Result {
	clusterName := multicluster.ClusterName(name)
	ns := &corev1.Namespace{}
	if res, ok := p.engine.GetHostObject(ctx, p.host.GetCache(), client.ObjectKey{Name: name}, ns, clusterName, func() kit.Result {
		p.engine.Disengage(clusterName, nil, "the namespace is gone")
		return kit.Result{}
	}); !ok {
		return res
	}
	if ns.DeletionTimestamp != nil {
		p.engine.Disengage(clusterName, nil, "the namespace is terminating")
		return kit.Result{}
	}

	// The engaged instance, when there is one, stays; an instance whose engage failed has
	// stopped (its handlers are closed) and is never engaged again.
	var cl *Cluster
	if engaged, err := p.GetTyped(ctx, clusterName); err == nil {
		cl, _ = engaged.(*Cluster)
	}
	if cl != nil && cl.uid != ns.UID {
		// Deleted and created again since the last sync: the old namespace's cluster goes
		// before the new one comes, as it would had each event been seen.
		p.engine.Disengage(clusterName, nil, "the namespace was created again")
		cl = nil
	}
	if cl == nil {
		cl = newCluster(p, ns)
	}
	return p.engine.Engage(ctx, name, kit.Member{Name: clusterName, Cluster: cl, From: "namespace " + name})
}

// IndexField indexes the shared host cache, which serves every namespace-cluster, present and
// future. Indexing the same object type and field again is a no-op.
func (p *Provider) IndexField(ctx context.Context, obj client.Object, field string, extractValue client.IndexerFunc) error {
	key := clusters.Index{Object: obj, Field: field}.Key()
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, dup := p.indexKeys[key]; dup {
		return nil
	}
	if err := p.host.GetFieldIndexer().IndexField(ctx, obj, field, extractValue); err != nil {
		return fmt.Errorf("namespace provider: indexing field %q on the host: %w", field, err)
	}
	p.indexKeys[key] = struct{}{}
	return nil
}

// dispatcherFor returns the dispatcher of a host informer, registering it on first use.
func (p *Provider) dispatcherFor(informer cache.Informer) (*dispatcher, error) {
	p.dispatchMu.Lock()
	defer p.dispatchMu.Unlock()
	if d, ok := p.dispatchers[informer]; ok {
		return d, nil
	}
	d, err := newDispatcher(informer)
	if err != nil {
		return nil, fmt.Errorf("namespace provider: registering on the host informer: %w", err)
	}
	p.dispatchers[informer] = d
	return d, nil
}
