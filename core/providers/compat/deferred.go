// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package compat

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
)

// RunnableProvider is a provider the manager runs: every provider built on the provider kit.
type RunnableProvider interface {
	multicluster.Provider
	multicluster.ProviderRunnable
}

// Deferred is a provider that serves nothing until Set hands it the provider to run: for an
// API that builds its provider after the manager that runs it, as multicluster-runtime's
// New(opts) then SetupWithManager(mgr) do (the compat packages of mcr's providers). Start waits
// for Set; Get finds nothing before it; IndexField calls before it are recorded and applied to
// the provider by Set. The zero value is ready to use; a Deferred must not be copied.
type Deferred[P RunnableProvider] struct {
	once    sync.Once
	ready   chan struct{}
	mu      sync.Mutex
	set     bool
	p       P
	indexes []deferredIndex
}

type deferredIndex struct {
	obj     client.Object
	field   string
	extract client.IndexerFunc
}

var _ RunnableProvider = &Deferred[RunnableProvider]{}

func (d *Deferred[P]) readyChan() chan struct{} {
	d.once.Do(func() { d.ready = make(chan struct{}) })
	return d.ready
}

// Set makes p the provider, applying the indexes recorded so far. A second Set fails.
func (d *Deferred[P]) Set(p P) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.set {
		return errors.New("the provider is already set up")
	}
	for _, idx := range d.indexes {
		if err := p.IndexField(context.Background(), idx.obj, idx.field, idx.extract); err != nil {
			return fmt.Errorf("applying the index on field %q: %w", idx.field, err)
		}
	}
	d.p, d.set, d.indexes = p, true, nil
	close(d.readyChan())
	return nil
}

// Provider returns the provider, and false before Set.
func (d *Deferred[P]) Provider() (P, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.p, d.set
}

// Start runs the provider once Set has been called, and returns nil if ctx ends before.
func (d *Deferred[P]) Start(ctx context.Context, aware multicluster.Aware) error {
	select {
	case <-d.readyChan():
		p, _ := d.Provider()
		return p.Start(ctx, aware)
	case <-ctx.Done():
		return nil
	}
}

// Get returns the provider's cluster name; before Set, an error wrapping
// multicluster.ErrClusterNotFound.
func (d *Deferred[P]) Get(ctx context.Context, name multicluster.ClusterName) (cluster.Cluster, error) {
	p, ok := d.Provider()
	if !ok {
		return nil, fmt.Errorf("cluster %q: %w", name, multicluster.ErrClusterNotFound)
	}
	return p.Get(ctx, name)
}

// IndexField adds the index through the provider, or records it for Set.
func (d *Deferred[P]) IndexField(ctx context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	d.mu.Lock()
	if !d.set {
		d.indexes = append(d.indexes, deferredIndex{obj: obj, field: field, extract: extract})
		d.mu.Unlock()
		return nil
	}
	p := d.p
	d.mu.Unlock()
	return p.IndexField(ctx, obj, field, extract)
}

// SetUp builds the provider with build, from the REST config of mgr's local manager (the host
// cluster of multicluster-runtime's providers), and makes it the provider: what a compat
// package's SetupWithManager does. name starts every error, e.g. "cluster-api provider"; a
// second SetUp fails.
func (d *Deferred[P]) SetUp(name string, mgr manager.Manager, build func(hostConfig *rest.Config) (P, error)) error {
	if mgr == nil {
		return errors.New(name + ": manager is nil")
	}
	local := mgr.GetLocalManager()
	if local == nil {
		return errors.New(name + ": local manager is nil")
	}
	if _, ok := d.Provider(); ok {
		return errors.New(name + ": SetupWithManager called twice")
	}
	p, err := build(local.GetConfig())
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if err := d.Set(p); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// ListClusters returns the names of the provider's engaged clusters (its ListClusters, which
// every provider of mcr has), and none before Set.
func (d *Deferred[P]) ListClusters() []multicluster.ClusterName {
	p, ok := d.Provider()
	if !ok {
		return nil
	}
	if l, ok := any(p).(interface {
		ListClusters() []multicluster.ClusterName
	}); ok {
		return l.ListClusters()
	}
	return nil
}
