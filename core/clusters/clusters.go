// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusters

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"mcr.dev/core/internal/served"
	"mcr.dev/core/multicluster"
)

// DefaultCacheSyncTimeout is the default of Options.CacheSyncTimeout.
const DefaultCacheSyncTimeout = time.Minute

// DefaultParkedRetryMax is the default of Options.ParkedRetryMax, and of the bound of the retries
// of a controller's parked sources (mcr.dev/core/controller.WithParkedRetryMax).
const DefaultParkedRetryMax = 30 * time.Second

var (
	// ErrClusterExists is returned (wrapped) by Add for a name that is engaged or being added.
	ErrClusterExists = errors.New("cluster already exists")

	// ErrCacheSyncTimeout is returned (wrapped) by Add when a cluster's cache did not sync within
	// Options.CacheSyncTimeout, typically because its apiserver is unreachable.
	ErrCacheSyncTimeout = errors.New("cache did not sync in time")

	errRemoved  = errors.New("cluster was removed")
	errReplaced = errors.New("cluster was replaced by a new instance")
)

// Options configures Clusters. The zero value of every field selects its default.
type Options[T cluster.Cluster] struct {
	// CacheSyncTimeout bounds how long Add waits for a newly added cluster's cache to sync before
	// giving up on it. An unreachable cluster fails its own Add after this long and never delays
	// Adds of other clusters.
	//
	// Defaults to DefaultCacheSyncTimeout (one minute).
	CacheSyncTimeout time.Duration

	// EqualClusters tells AddOrReplace whether a new instance is the same cluster as the engaged
	// one (no-op) or a replacement (re-engage).
	//
	// Defaults to EqualClusters, which compares the endpoint and credentials of GetConfig().
	EqualClusters func(a, b T) bool

	// Logger receives lifecycle messages, with the cluster under the key "cluster".
	//
	// Defaults to Log, else to controller-runtime's logger named "clusters".
	Logger logr.Logger

	// Log is the former name of Logger, used when Logger is unset.
	//
	// Deprecated: use Logger.
	Log logr.Logger

	// ParkedRetryMax bounds the backoff (from one second, doubling) of the retries of a field
	// index parked on a cluster that does not serve its kind (see IndexField): a kind the
	// cluster starts serving is indexed there at most this late. Each retry asks the cluster's
	// discovery for the kind's group.
	//
	// Defaults to DefaultParkedRetryMax (30 seconds).
	ParkedRetryMax time.Duration
}

// withDefaults is the only place defaults are applied.
func (o Options[T]) withDefaults() Options[T] {
	if o.CacheSyncTimeout <= 0 {
		o.CacheSyncTimeout = DefaultCacheSyncTimeout
	}
	if o.EqualClusters == nil {
		o.EqualClusters = EqualClusters[T]
	}
	if o.Logger.GetSink() == nil {
		o.Logger = o.Log
	}
	if o.Logger.GetSink() == nil {
		o.Logger = ctrllog.Log.WithName("clusters")
	}
	if o.ParkedRetryMax <= 0 {
		o.ParkedRetryMax = DefaultParkedRetryMax
	}
	return o
}

// EqualClusters reports whether a and b talk to the same endpoint with the same credentials,
// according to EqualConfigs. It is the default of Options.EqualClusters.
func EqualClusters[T cluster.Cluster](a, b T) bool {
	return EqualConfigs(a.GetConfig(), b.GetConfig())
}

// Clusters is a concurrency-safe set of engaged clusters, meant to be embedded in providers: it
// supplies Get and IndexField of multicluster.Provider. The zero value is ready to use with
// default options; New sets other options. A Clusters must not be copied after first use.
//
// A cluster is visible to Get from the moment it has synced and been indexed, just before it is
// engaged, so that requests its controllers reconcile during Engage can already look it up.
type Clusters[T cluster.Cluster] struct {
	// Options is read on every call; set it before first use and do not change it afterwards.
	Options Options[T]

	mu     sync.Mutex
	served map[multicluster.ClusterName]*entry[T] // visible to Get
	adding map[multicluster.ClusterName]*entry[T] // reserved by an Add in progress
	// running holds every instance whose Start has not returned yet, also those already
	// forgotten, so that Remove can wait for them.
	running   map[multicluster.ClusterName]map[*entry[T]]struct{}
	indexes   []Index
	indexKeys map[string]struct{}
}

// New returns an empty set of clusters configured by opts.
func New[T cluster.Cluster](opts Options[T]) *Clusters[T] {
	return &Clusters[T]{Options: opts}
}

// entry is one instance of a cluster, from its reservation by Add until it is forgotten.
type entry[T cluster.Cluster] struct {
	name    multicluster.ClusterName
	cluster T
	ctx     context.Context
	cancel  context.CancelCauseFunc
	// done is closed when nothing runs for this instance any more: its Start has returned, or
	// it was never started by us.
	done chan struct{}
	// parked are the indexes the cluster cannot have yet because it does not serve their kind;
	// retrying is true while a goroutine retries them. Both guarded by Clusters.mu.
	parked   []parkedIndex
	retrying bool
}

// stop ends the instance and waits until its Start has returned.
func (e *entry[T]) stop(cause error) {
	e.cancel(cause)
	<-e.done
}

// AddOption changes how one Add or AddOrReplace treats its cluster.
type AddOption func(*addOptions)

type addOptions struct {
	alreadyRunning bool
}

// AlreadyRunning tells Add that the cluster is started and stopped by its owner (for example it
// was added to a manager). Add then does not call its Start and only waits for its cache to sync.
func AlreadyRunning() AddOption {
	return func(o *addOptions) { o.alreadyRunning = true }
}

// init makes the zero value usable; it must be called with c.mu held.
func (c *Clusters[T]) init() {
	if c.served == nil {
		c.served = map[multicluster.ClusterName]*entry[T]{}
		c.adding = map[multicluster.ClusterName]*entry[T]{}
		c.running = map[multicluster.ClusterName]map[*entry[T]]struct{}{}
		c.indexKeys = map[string]struct{}{}
	}
}

// Add starts cl, waits for its cache to sync, applies every recorded index and engages it with
// aware (which may be nil, to only track the cluster). It returns once the cluster is engaged,
// or with an error after everything it did was undone. Adding a name that is engaged or being
// added fails with ErrClusterExists.
//
// The cluster lives until Remove, until its Start returns (the cluster failed), or until ctx
// ends, whichever comes first; ctx must therefore be long-lived, typically the provider's Start
// context, and never a reconcile context.
func (c *Clusters[T]) Add(ctx context.Context, name multicluster.ClusterName, cl T, aware multicluster.Aware, opts ...AddOption) error {
	return c.add(ctx, name, cl, aware, false, opts)
}

// AddOrReplace adds cl, or replaces the engaged cluster of that name when Options.EqualClusters
// says cl differs from it; when they are equal it does nothing and cl is not used (nor
// started). ctx is as for Add.
//
// A replacement engages the new instance first and only then disengages the old one. Get never
// reports the cluster missing during a credential rotation, so queued requests are not dropped,
// and if the new instance fails, the old one simply stays engaged. Awares see an Engage of a
// different instance under an engaged name, which the contract defines as a re-engage, followed
// by the end of the old instance's context.
func (c *Clusters[T]) AddOrReplace(ctx context.Context, name multicluster.ClusterName, cl T, aware multicluster.Aware, opts ...AddOption) error {
	return c.add(ctx, name, cl, aware, true, opts)
}

// add reserves the name, starts the instance, waits for its cache to sync, applies the indexes
// (making it visible) and engages it; a failing phase undoes what the earlier ones did.
func (c *Clusters[T]) add(ctx context.Context, name multicluster.ClusterName, cl T, aware multicluster.Aware, replace bool, optFns []AddOption) error {
	o := c.Options.withDefaults()
	log := o.Logger.WithValues("cluster", name)
	var opts addOptions
	for _, fn := range optFns {
		fn(&opts)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("adding cluster %q: %w", name, err)
	}

	e, err := c.reserve(ctx, name, cl, replace, opts.alreadyRunning, o.EqualClusters)
	if err != nil || e == nil {
		return err
	}
	c.start(e, opts.alreadyRunning, log)
	if err := c.waitForSync(e, o.CacheSyncTimeout); err != nil {
		e.stop(err)
		return fmt.Errorf("adding cluster %q: %w", name, err)
	}
	prev, err := c.applyIndexes(e, o.CacheSyncTimeout)
	if err != nil {
		e.stop(err)
		return fmt.Errorf("adding cluster %q: %w", name, err)
	}
	if err := c.engage(e, prev, aware); err != nil {
		return err
	}
	if prev != nil {
		prev.stop(errReplaced)
		log.Info("Replaced cluster")
	} else {
		log.Info("Added cluster")
	}
	return nil
}

// reserve claims name for a new instance of cl, so that no other Add of the name runs at the
// same time. It returns a nil entry and no error when replace is set and cl equals the engaged
// instance: there is nothing to do.
func (c *Clusters[T]) reserve(ctx context.Context, name multicluster.ClusterName, cl T, replace, alreadyRunning bool, equal func(a, b T) bool) (*entry[T], error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init()
	if _, busy := c.adding[name]; busy {
		return nil, fmt.Errorf("adding cluster %q: %w: an add of this name is in progress", name, ErrClusterExists)
	}
	if old, exists := c.served[name]; exists {
		if !replace {
			return nil, fmt.Errorf("adding cluster %q: %w", name, ErrClusterExists)
		}
		if equal(old.cluster, cl) {
			return nil, nil
		}
	}
	cctx, cancel := context.WithCancelCause(ctx)
	e := &entry[T]{name: name, cluster: cl, ctx: cctx, cancel: cancel, done: make(chan struct{})}
	c.adding[name] = e
	if !alreadyRunning {
		if c.running[name] == nil {
			c.running[name] = map[*entry[T]]struct{}{}
		}
		c.running[name][e] = struct{}{}
	}
	return e, nil
}

// start runs the instance unless its owner does.
func (c *Clusters[T]) start(e *entry[T], alreadyRunning bool, log logr.Logger) {
	// Whatever ends the instance's context also removes it from the set.
	context.AfterFunc(e.ctx, func() { c.forget(e) })
	if alreadyRunning {
		close(e.done)
		return
	}
	go c.run(e, log)
}

// waitForSync waits, at most timeout, for the instance's cache to sync.
func (c *Clusters[T]) waitForSync(e *entry[T], timeout time.Duration) error {
	syncCtx, cancelSync := context.WithTimeout(e.ctx, timeout)
	synced := e.cluster.GetCache().WaitForCacheSync(syncCtx)
	cancelSync()
	if synced {
		return nil
	}
	if e.ctx.Err() != nil {
		return fmt.Errorf("cluster %q: waiting for cache sync: %w", e.name, context.Cause(e.ctx))
	}
	return fmt.Errorf("cluster %q: %w within %s", e.name, ErrCacheSyncTimeout, timeout)
}

// applyIndexes applies the recorded indexes until none is pending, then makes the instance
// visible in the same critical section, so that IndexField calls from then on reach it
// themselves. It returns the instance it replaced in Get, if any. Applying an index starts the
// informer of its kind without waiting for it (controller-runtime's IndexField does not), so
// after applying any it waits, at most timeout, for the cache to sync again: a cluster is
// engaged only once every informer it has then has synced (rule 3 of the provider contract),
// so that a List by an index right after the engagement sees every object.
func (c *Clusters[T]) applyIndexes(e *entry[T], timeout time.Duration) (prev *entry[T], err error) {
	synced := true // waitForSync has returned before the first index
	for applied := 0; ; {
		c.mu.Lock()
		if e.ctx.Err() != nil {
			c.mu.Unlock()
			return nil, context.Cause(e.ctx)
		}
		pending := slices.Clone(c.indexes[applied:])
		if len(pending) == 0 && synced {
			delete(c.adding, e.name)
			prev = c.served[e.name]
			c.served[e.name] = e
			c.mu.Unlock()
			return prev, nil
		}
		c.mu.Unlock()
		if len(pending) == 0 {
			if err := c.waitForSync(e, timeout); err != nil {
				return nil, err
			}
			synced = true
			continue
		}
		for _, idx := range pending {
			err := c.applyIndex(e.ctx, e, idx)
			if reason, notServed := NotServed(err); notServed {
				c.park(e, idx, reason)
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("cluster %q: applying index on field %q: %w", e.name, idx.Field, err)
			}
		}
		applied += len(pending)
		synced = false
	}
}

// engage engages the visible instance with aware. When that fails, prev (the instance it was
// to replace) is served again if it is still alive, and the new instance is stopped.
func (c *Clusters[T]) engage(e, prev *entry[T], aware multicluster.Aware) error {
	if aware == nil {
		return nil
	}
	err := aware.Engage(e.ctx, e.name, e.cluster)
	if err == nil {
		return nil
	}
	err = fmt.Errorf("engaging cluster %q: %w", e.name, err)
	c.mu.Lock()
	restore := prev != nil && c.served[e.name] == e && prev.ctx.Err() == nil
	if restore {
		c.served[e.name] = prev
	} else if c.served[e.name] == e {
		delete(c.served, e.name)
	}
	c.mu.Unlock()
	e.stop(err)
	if prev != nil && !restore {
		prev.stop(errRemoved)
	}
	return err
}

// run runs the cluster until its context ends or it fails on its own.
func (c *Clusters[T]) run(e *entry[T], log logr.Logger) {
	defer func() {
		c.mu.Lock()
		delete(c.running[e.name], e)
		if len(c.running[e.name]) == 0 {
			delete(c.running, e.name)
		}
		c.mu.Unlock()
		close(e.done)
	}()
	err := e.cluster.Start(e.ctx)
	// The instance is finished: do not keep its idle keep-alive connections (two goroutines
	// each) around until they time out.
	if hc := e.cluster.GetHTTPClient(); hc != nil {
		hc.CloseIdleConnections()
	}
	if e.ctx.Err() != nil {
		return
	}
	if err != nil {
		log.Error(err, "Cluster stopped with an error, disengaging it")
		e.cancel(fmt.Errorf("cluster stopped: %w", err))
		return
	}
	log.Info("Cluster stopped on its own, disengaging it")
	e.cancel(errors.New("cluster stopped on its own"))
}

// forget drops e from the set if it is still there; a newer instance of the name is kept.
func (c *Clusters[T]) forget(e *entry[T]) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.served[e.name] == e {
		delete(c.served, e.name)
	}
	if c.adding[e.name] == e {
		delete(c.adding, e.name)
	}
	served.Forget(e.cluster)
}

// Remove disengages the named cluster (and aborts an Add of that name in progress), and returns
// once the cluster's Start has returned; that includes an instance whose context already ended
// but which is still shutting down. Removing an unknown name does nothing.
func (c *Clusters[T]) Remove(name multicluster.ClusterName) {
	c.mu.Lock()
	stopping := c.forgetNameLocked(name)
	c.mu.Unlock()
	c.stopAll(stopping)
}

// RemoveAll removes every cluster, as Remove does, and returns once all of them have stopped.
// Providers call it when their Start returns.
func (c *Clusters[T]) RemoveAll() {
	c.mu.Lock()
	var stopping []*entry[T]
	names := map[multicluster.ClusterName]struct{}{}
	for _, m := range []map[multicluster.ClusterName]*entry[T]{c.served, c.adding} {
		for name := range m {
			names[name] = struct{}{}
		}
	}
	for name := range c.running {
		names[name] = struct{}{}
	}
	for name := range names {
		stopping = append(stopping, c.forgetNameLocked(name)...)
	}
	c.mu.Unlock()
	c.stopAll(stopping)
}

// forgetNameLocked drops every instance of name from the set and returns those to stop, each
// once.
func (c *Clusters[T]) forgetNameLocked(name multicluster.ClusterName) []*entry[T] {
	instances := maps.Clone(c.running[name])
	if instances == nil {
		instances = map[*entry[T]]struct{}{}
	}
	if e, ok := c.served[name]; ok {
		instances[e] = struct{}{}
		delete(c.served, name)
	}
	if e, ok := c.adding[name]; ok {
		instances[e] = struct{}{}
		delete(c.adding, name)
	}
	return slices.Collect(maps.Keys(instances))
}

func (c *Clusters[T]) stopAll(stopping []*entry[T]) {
	for _, e := range stopping {
		e.stop(errRemoved)
	}
	log := c.Options.withDefaults().Logger
	for _, e := range stopping {
		log.V(1).Info("Removed cluster instance", "cluster", e.name)
	}
}

// Get returns the named cluster, or an error wrapping multicluster.ErrClusterNotFound.
func (c *Clusters[T]) Get(ctx context.Context, name multicluster.ClusterName) (cluster.Cluster, error) {
	cl, err := c.GetTyped(ctx, name)
	if err != nil {
		return nil, err
	}
	return cl, nil
}

// GetTyped returns the named cluster, or an error wrapping multicluster.ErrClusterNotFound.
func (c *Clusters[T]) GetTyped(_ context.Context, name multicluster.ClusterName) (T, error) {
	c.mu.Lock()
	e, ok := c.served[name]
	c.mu.Unlock()
	if !ok || e.ctx.Err() != nil {
		var zero T
		return zero, fmt.Errorf("cluster %q: %w", name, multicluster.ErrClusterNotFound)
	}
	return e.cluster, nil
}

// ClusterNames returns the names of the visible clusters, sorted.
func (c *Clusters[T]) ClusterNames() []multicluster.ClusterName {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Sorted(maps.Keys(c.served))
}

// Len returns the number of visible clusters.
func (c *Clusters[T]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.served)
}

// IndexField records a field index and applies it to every cluster, present and future. Each
// cluster gets each index exactly once, also when IndexField races with Add. A cluster that does
// not serve the indexed kind (a CRD some members do not have, or not yet) is not an error: the
// index is parked there, reported once (a log line, mcr_parked_field_indexes, ParkedIndexes) and
// applied when the cluster serves the kind (see Options.ParkedRetryMax); reads through the index
// fail on that cluster until then. Indexing the same
// object type and field again is a no-op (the first extractor stays), because a second identical
// index would conflict on a controller-runtime cache. Errors of individual clusters are joined,
// each naming its cluster; the index stays recorded for clusters added later.
func (c *Clusters[T]) IndexField(ctx context.Context, obj client.Object, field string, extractValue client.IndexerFunc) error {
	idx := Index{Object: obj, Field: field, Extractor: extractValue}
	c.mu.Lock()
	c.init()
	key := idx.Key()
	if _, dup := c.indexKeys[key]; dup {
		c.mu.Unlock()
		return nil
	}
	c.indexKeys[key] = struct{}{}
	c.indexes = append(c.indexes, idx)
	targets := slices.SortedFunc(maps.Values(c.served), func(a, b *entry[T]) int {
		return cmp.Compare(a.name, b.name)
	})
	c.mu.Unlock()

	var errs []error
	for _, e := range targets {
		err := c.applyIndex(ctx, e, idx)
		if reason, notServed := NotServed(err); notServed {
			c.park(e, idx, reason)
			continue
		}
		if err != nil && e.ctx.Err() == nil { // a cluster going away does not fail the index
			errs = append(errs, fmt.Errorf("cluster %q: %w", e.name, err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("indexing field %q: %w", field, errors.Join(errs...))
	}
	return nil
}

// Indexes returns the recorded indexes, in the order they were first recorded.
func (c *Clusters[T]) Indexes() []Index {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.indexes)
}

// OneOptions returns the only element of options, or the zero value when there is none: for a
// constructor whose Options are an optional last argument, so that multicluster-runtime's
// spelling without them compiles too (namespace.New(host), clusters.New()). More than one is a
// programming error and panics, naming fn.
func OneOptions[O any](fn string, options []O) O {
	var opts O
	switch len(options) {
	case 0:
	case 1:
		opts = options[0]
	default:
		panic(fmt.Sprintf("%s: at most one Options argument, got %d", fn, len(options)))
	}
	return opts
}
