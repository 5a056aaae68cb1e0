// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package namespace

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
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
	// CacheSyncTimeout bounds how long engaging a namespace waits for the host cache to sync.
	//
	// Defaults to clusters.DefaultCacheSyncTimeout (one minute).
	CacheSyncTimeout time.Duration

	// Log receives lifecycle messages, with the cluster under the key "cluster".
	//
	// Defaults to controller-runtime's logger named "namespace-provider".
	Log logr.Logger
}

// Provider engages every Namespace of a host cluster as a cluster. Create it with New.
type Provider struct {
	host cluster.Cluster
	log  logr.Logger
	set  *clusters.Clusters[*Cluster]

	mu       sync.Mutex
	startCtx context.Context // nil until Start
	aware    multicluster.Aware
	// engaged holds the live generation of each namespace; retiring the completion of the
	// previous generation of a namespace, which a re-created namespace waits for.
	engaged   map[string]*generation
	retiring  map[string]chan struct{}
	workers   sync.WaitGroup
	indexKeys map[string]struct{}

	dispatchMu  sync.Mutex
	dispatchers map[cache.Informer]*dispatcher
}

// generation is one engagement of a namespace, from its add to its delete.
type generation struct {
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed once its engage attempt has finished
}

// New returns a provider for the namespaces of host. host must be started by its owner, for
// example by being the manager's local cluster; the provider only reads from it. Options, at
// most one (New(host) is multicluster-runtime's spelling), are defaulted here.
func New(host cluster.Cluster, options ...Options) *Provider {
	opts := clusters.OneOptions("namespace.New", options)
	if opts.Log.GetSink() == nil {
		opts.Log = ctrllog.Log.WithName("namespace-provider")
	}
	return &Provider{
		host: host,
		log:  opts.Log,
		set: clusters.New(clusters.Options[*Cluster]{
			CacheSyncTimeout: opts.CacheSyncTimeout,
			Log:              opts.Log,
		}),
		engaged:     map[string]*generation{},
		retiring:    map[string]chan struct{}{},
		indexKeys:   map[string]struct{}{},
		dispatchers: map[cache.Informer]*dispatcher{},
	}
}

// Start watches the host's Namespaces and engages each with aware until it is deleted or
// terminating; it blocks until ctx ends and returns once every namespace-cluster is disengaged.
// Start may be called only once.
func (p *Provider) Start(ctx context.Context, aware multicluster.Aware) error {
	p.mu.Lock()
	if p.startCtx != nil {
		p.mu.Unlock()
		return errors.New("namespace provider: Start called twice")
	}
	p.startCtx, p.aware = ctx, aware
	p.mu.Unlock()

	informer, err := p.host.GetCache().GetInformer(ctx, &corev1.Namespace{})
	if err != nil {
		if ctx.Err() != nil {
			return nil // stopped before the host cache synced
		}
		return fmt.Errorf("namespace provider: watching namespaces: %w", err)
	}
	reg, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    p.onNamespace,
		UpdateFunc: func(_, obj any) { p.onNamespace(obj) },
		DeleteFunc: p.onNamespaceDeleted,
	})
	if err != nil {
		return fmt.Errorf("namespace provider: watching namespaces: %w", err)
	}

	<-ctx.Done()

	if err := informer.RemoveEventHandler(reg); err != nil {
		p.log.Error(err, "Failed to remove the namespace event handler")
	}
	p.mu.Lock()
	for name, g := range p.engaged {
		g.cancel()
		delete(p.engaged, name)
	}
	p.mu.Unlock()
	p.workers.Wait()
	return nil
}

func (p *Provider) onNamespace(obj any) {
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return
	}
	if ns.DeletionTimestamp != nil {
		p.disengage(ns.Name)
		return
	}
	p.engage(ns.Name)
}

func (p *Provider) onNamespaceDeleted(obj any) {
	switch o := obj.(type) {
	case *corev1.Namespace:
		p.disengage(o.Name)
	case toolscache.DeletedFinalStateUnknown:
		// The delete was missed during a re-list; the tombstone may hold the last known state.
		if ns, ok := o.Obj.(*corev1.Namespace); ok {
			p.disengage(ns.Name)
			return
		}
		if _, name, err := toolscache.SplitMetaNamespaceKey(o.Key); err == nil {
			p.disengage(name)
		}
	}
}

// engage starts engaging a namespace unless it is engaged already. It never blocks: the engage
// runs in its own goroutine, after any previous generation of the namespace has stopped.
func (p *Provider) engage(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.engaged[name]; ok || p.startCtx.Err() != nil {
		return
	}
	ctx, cancel := context.WithCancel(p.startCtx)
	g := &generation{ctx: ctx, cancel: cancel, done: make(chan struct{})}
	p.engaged[name] = g
	previous := p.retiring[name]
	p.workers.Add(1)
	go p.run(name, g, previous)
}

// run engages one generation of a namespace and, once it is disengaged, removes its event
// handlers; only then may a re-created namespace of the same name be engaged.
func (p *Provider) run(name string, g *generation, previous chan struct{}) {
	defer p.workers.Done()
	defer func() {
		p.mu.Lock()
		if p.retiring[name] == g.done {
			delete(p.retiring, name)
		}
		p.mu.Unlock()
		close(g.done)
	}()
	if previous != nil {
		<-previous
	}
	cl := newCluster(p, name)
	defer cl.handlers.close()

	// The host cluster is started by its owner, so the set only waits for its cache to sync.
	err := p.set.Add(g.ctx, multicluster.ClusterName(name), cl, p.aware, clusters.AlreadyRunning())
	if err != nil {
		if g.ctx.Err() == nil {
			p.log.Error(err, "Failed to engage namespace; retrying on its next update", "cluster", name)
			p.mu.Lock()
			if p.engaged[name] == g {
				delete(p.engaged, name)
			}
			p.mu.Unlock()
		}
		return
	}
	<-g.ctx.Done()
	p.set.Remove(multicluster.ClusterName(name))
}

func (p *Provider) disengage(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	g, ok := p.engaged[name]
	if !ok {
		return
	}
	delete(p.engaged, name)
	p.retiring[name] = g.done
	g.cancel()
}

// Get returns the cluster of the named namespace while it is engaged, or an error wrapping
// multicluster.ErrClusterNotFound.
func (p *Provider) Get(ctx context.Context, name multicluster.ClusterName) (cluster.Cluster, error) {
	return p.set.Get(ctx, name)
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
