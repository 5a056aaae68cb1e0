// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package fleet

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/redact"
)

// Handler is told about the objects of one type of every engaged cluster, with the cluster
// each belongs to. Its calls are serial (one at a time, across clusters) and should return
// quickly: they hold up the handler's other events. The objects are the caches' own: they must
// not be modified.
type Handler interface {
	// OnAdd is called for each object of a cluster that engages, or that has engaged when the
	// handler is added (isInInitialList is true: it existed before), and for each object
	// created in an engaged cluster.
	OnAdd(cluster multicluster.ClusterName, obj client.Object, isInInitialList bool)
	// OnUpdate is called for each change of an object of an engaged cluster, and on every
	// resync of the cluster's informer.
	OnUpdate(cluster multicluster.ClusterName, oldObj, newObj client.Object)
	// OnDelete is called for each object deleted from an engaged cluster, with its last state
	// known (which may be stale when the watch missed the deletion).
	OnDelete(cluster multicluster.ClusterName, obj client.Object)
}

// HandlerFuncs is a Handler of functions; a nil function ignores its events.
type HandlerFuncs struct {
	AddFunc    func(cluster multicluster.ClusterName, obj client.Object, isInInitialList bool)
	UpdateFunc func(cluster multicluster.ClusterName, oldObj, newObj client.Object)
	DeleteFunc func(cluster multicluster.ClusterName, obj client.Object)
}

var _ Handler = HandlerFuncs{}

func (h HandlerFuncs) OnAdd(cluster multicluster.ClusterName, obj client.Object, isInInitialList bool) {
	if h.AddFunc != nil {
		h.AddFunc(cluster, obj, isInInitialList)
	}
}

func (h HandlerFuncs) OnUpdate(cluster multicluster.ClusterName, oldObj, newObj client.Object) {
	if h.UpdateFunc != nil {
		h.UpdateFunc(cluster, oldObj, newObj)
	}
}

func (h HandlerFuncs) OnDelete(cluster multicluster.ClusterName, obj client.Object) {
	if h.DeleteFunc != nil {
		h.DeleteFunc(cluster, obj)
	}
}

// AddEventHandler tells handler about the objects of obj's type (a typed object, or an
// unstructured or metadata-only one with its kind set) of every engaged cluster until the
// registration is removed: first adds of the objects of the clusters engaged now, then their
// changes; a cluster that engages later is announced with adds of its objects, and nothing more
// is heard of a cluster once it is disengaged (no deletes either: a handler that keeps state per
// cluster drops it itself).
//
// A Reader of New adds one event handler to the informer of the type in each engaged cluster's
// cache (creating the informer on first use), at most Options.MaxConcurrency clusters at a time, each
// bounded by Options.ClusterTimeout and ctx, and removes it when the cluster is disengaged. When
// it cannot be added to some clusters now (they do not serve the kind, their API server does not
// answer), the registration is returned with a *PartialError naming them; their events follow
// once it can, as it tries again with backoff (from one second to a minute) until the cluster is
// disengaged. The same holds, with a log line instead of an error, for clusters that engage
// later.
func (r *Reader) AddEventHandler(ctx context.Context, obj client.Object, handler Handler) (*Registration, error) {
	if obj == nil || handler == nil {
		return nil, errors.New("fleet: AddEventHandler needs an object and a handler")
	}
	sub, err := r.backend.AddEventHandler(ctx, obj, handler)
	if sub == nil {
		return nil, err
	}
	return &Registration{sub: sub}, err
}

// Registration is a handler added with Reader.AddEventHandler.
type Registration struct{ sub Subscription }

// Remove removes the handler from every cluster. Once Remove has returned the handler is not
// called any more; it waits for a call in progress, so it must not be called from the handler
// itself. Removing twice, or a nil registration, does nothing.
func (reg *Registration) Remove() {
	if reg != nil {
		reg.sub.Remove()
	}
}

// HasSynced reports whether the handler has been told about every object of the clusters
// engaged so far that it could be added to: each has been tried, and the informers it was added
// to have delivered their initial lists. Clusters it is waiting to try again do not count.
func (reg *Registration) HasSynced() bool { return reg.sub.HasSynced() }

// AddEventHandler is the clusterReader's Backend.AddEventHandler: one event handler on the
// informer of the type in each engaged cluster's cache.
func (r *clusterReader) AddEventHandler(ctx context.Context, obj client.Object, handler Handler) (Subscription, error) {
	reg := &registration{
		r: r, obj: obj, handler: handler,
		removed: make(chan struct{}),
		subs:    map[*member]*subscription{},
	}
	// In one critical section with Engage's: a cluster engaged from now on is Engage's to
	// announce, one engaged before is added here.
	r.mu.Lock()
	r.regs[reg] = struct{}{}
	members := r.engagedLocked(nil)
	r.mu.Unlock()
	failed := r.forEach(members, func(_ int, m *member) error {
		if err := reg.subscribe(ctx, m); err != nil {
			go reg.follow(m, retryMinDelay, false)
			return redact.Error(err)
		}
		return nil
	})
	if len(failed) > 0 {
		return reg, &PartialError{Action: "adding an event handler for " + describe(obj), Errors: failed, Clusters: len(members)}
	}
	return reg, nil
}

// registration is the clusterReader's Subscription.
type registration struct {
	r       *clusterReader
	obj     client.Object
	handler Handler

	removeOnce sync.Once
	removed    chan struct{}
	// pending counts the engaged clusters the handler has not been tried on yet.
	pending atomic.Int64

	// mu guards subs.
	mu   sync.Mutex
	subs map[*member]*subscription

	// deliver is held while the handler is called, so that its calls are serial.
	deliver sync.Mutex
}

// subscription is the registration's event handler on one cluster's informer.
type subscription struct {
	informer cache.Informer
	handle   toolscache.ResourceEventHandlerRegistration
}

// Remove is Registration.Remove: the handler comes off every cluster's informer.
func (reg *registration) Remove() {
	if reg == nil {
		return
	}
	reg.removeOnce.Do(func() {
		close(reg.removed)
		reg.r.mu.Lock()
		delete(reg.r.regs, reg)
		reg.r.mu.Unlock()
		reg.mu.Lock()
		subs := reg.subs
		reg.subs = map[*member]*subscription{}
		reg.mu.Unlock()
		for _, s := range subs {
			_ = s.informer.RemoveEventHandler(s.handle)
		}
	})
	// Wait for a call in progress on another goroutine.
	reg.deliver.Lock()
	defer reg.deliver.Unlock()
}

// HasSynced is Registration.HasSynced.
func (reg *registration) HasSynced() bool {
	if reg.pending.Load() > 0 {
		return false
	}
	reg.mu.Lock()
	defer reg.mu.Unlock()
	for _, s := range reg.subs {
		if !s.handle.HasSynced() {
			return false
		}
	}
	return true
}

func (reg *registration) isRemoved() bool {
	select {
	case <-reg.removed:
		return true
	default:
		return false
	}
}

// follow adds the handler to m's informer after delay, trying again with backoff until it is
// added, m is disengaged or the registration removed. When pending, m counts in reg.pending
// until the first try.
func (reg *registration) follow(m *member, delay time.Duration, pending bool) {
	tried := func() {
		if pending {
			pending = false
			reg.pending.Add(-1)
		}
	}
	defer tried()
	for backoff := retryMinDelay; ; backoff = min(2*backoff, retryMaxDelay) {
		if delay > 0 {
			timer := time.NewTimer(delay)
			select {
			case <-m.ctx.Done():
				timer.Stop()
				return
			case <-reg.removed:
				timer.Stop()
				return
			case <-timer.C:
			}
		}
		err := reg.subscribe(m.ctx, m)
		tried()
		if err == nil || !m.engaged() || reg.isRemoved() {
			return
		}
		reg.r.log.Error(err, "Cannot add the fleet event handler to the cluster, will retry",
			"cluster", m.name, "kind", describe(reg.obj), "retryIn", backoff)
		delay = backoff
	}
}

// subscribe adds the handler to m's informer of the registration's type, unless it is there,
// m is no longer engaged, or the registration was removed.
func (reg *registration) subscribe(ctx context.Context, m *member) error {
	if reg.isRemoved() || !reg.r.current(m) {
		return nil
	}
	reg.mu.Lock()
	there := reg.subs[m] != nil
	reg.mu.Unlock()
	if there {
		return nil
	}
	// The informer's cache may still be syncing: its initial list is delivered as adds.
	informer, err := answer(ctx, reg.r, func(ctx context.Context) (cache.Informer, error) {
		return m.cluster.GetCache().GetInformer(ctx, reg.obj, cache.BlockUntilSynced(false))
	})
	if err != nil {
		return fmt.Errorf("getting the informer: %w", err)
	}
	handle, err := informer.AddEventHandler(reg.forward(m))
	if err != nil {
		return fmt.Errorf("adding the event handler: %w", err)
	}
	reg.mu.Lock()
	// Checked under mu, which drop and Remove take after m was disengaged or the registration
	// removed: either they see this subscription, or it sees what they did.
	keep := !reg.isRemoved() && reg.r.current(m) && reg.subs[m] == nil
	if keep {
		reg.subs[m] = &subscription{informer: informer, handle: handle}
	}
	reg.mu.Unlock()
	if !keep {
		_ = informer.RemoveEventHandler(handle)
	}
	return nil
}

// drop removes the handler from m's informer; m is no longer engaged.
func (reg *registration) drop(m *member) {
	reg.mu.Lock()
	s := reg.subs[m]
	delete(reg.subs, m)
	reg.mu.Unlock()
	if s != nil {
		_ = s.informer.RemoveEventHandler(s.handle)
	}
}

// forward is the registration's handler on m's informer.
func (reg *registration) forward(m *member) toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, isInInitialList bool) {
			reg.pass(m, obj, func(o client.Object) { reg.handler.OnAdd(m.name, o, isInInitialList) })
		},
		UpdateFunc: func(oldObj, newObj any) {
			old, ok := kit.ObjectOf(oldObj)
			if !ok {
				return
			}
			reg.pass(m, newObj, func(o client.Object) { reg.handler.OnUpdate(m.name, old, o) })
		},
		DeleteFunc: func(obj any) {
			reg.pass(m, obj, func(o client.Object) { reg.handler.OnDelete(m.name, o) })
		},
	}
}

// pass calls the handler, one call at a time, while m is engaged and the registration is not
// removed.
func (reg *registration) pass(m *member, obj any, call func(client.Object)) {
	o, ok := kit.ObjectOf(obj)
	if !ok {
		return
	}
	reg.deliver.Lock()
	defer reg.deliver.Unlock()
	// Checked under deliver: once a cluster is disengaged or the registration removed (and
	// Remove has returned), no call starts.
	if reg.isRemoved() || !reg.r.current(m) {
		return
	}
	call(o)
}
