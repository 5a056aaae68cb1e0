// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package fleet

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	toolscache "k8s.io/client-go/tools/cache"

	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kcp-dev/logicalcluster/v3"

	corefleet "mcr.dev/core/fleet"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/redact"

	"mcr.dev/providers/kcp/internal/cache"
)

// AddEventHandler adds one event handler to the shared informer of the type of each endpoint
// that serves an engaged logical cluster (creating the informer there on first use) and filters
// by logical cluster, so that the cost is one registration per endpoint, not per logical
// cluster. When the type cannot be watched on an endpoint, the subscription is returned with a
// *fleet.PartialError naming the logical clusters engaged through it; their events follow once
// the next logical cluster of that endpoint engages. ctx bounds the creation of the informers
// only. OnUpdate is also called on every resync of the shared informer; OnDelete gets the last
// state known, which may be stale when the watch missed the deletion.
func (b *Backend) AddEventHandler(ctx context.Context, obj client.Object, handler corefleet.Handler) (corefleet.Subscription, error) {
	r := &subscription{b: b, obj: obj, handler: handler, subs: map[*cache.Wildcard]*endpointSub{}}
	failed := map[multicluster.ClusterName]error{}
	tried := 0
	for _, shared := range b.register(r) {
		members := b.membersOn(shared)
		tried += len(members)
		if err := r.subscribe(ctx, shared); err != nil {
			err = fmt.Errorf("endpoint %s: %w", redact.Text(shared.URL()), redact.Error(err))
			for _, m := range members {
				failed[multicluster.ClusterName(m.name)] = err
			}
		}
	}
	if len(failed) > 0 {
		return r, &corefleet.PartialError{Action: fmt.Sprintf("adding an event handler for %T", obj), Errors: failed, Clusters: tried}
	}
	return r, nil
}

// subscription is a handler added with Backend.AddEventHandler.
type subscription struct {
	b       *Backend
	obj     client.Object
	handler corefleet.Handler
	removed atomic.Bool
	// pending counts the engagements of logical clusters not announced to the handler yet.
	pending atomic.Int64

	// mu guards subs.
	mu   sync.Mutex
	subs map[*cache.Wildcard]*endpointSub

	// deliver is held while the handler is called, so that its calls are serial.
	deliver sync.Mutex
}

// endpointSub is the registration's event handler on one endpoint's shared informer.
type endpointSub struct {
	informer toolscache.SharedIndexInformer
	reg      toolscache.ResourceEventHandlerRegistration
	// covered holds the members engaged through the endpoint when the handler was added there:
	// the informer's initial list announces them, so their engagement need not.
	covered map[*member]bool
}

// Remove removes the handler from every endpoint's informer, and waits for a call in progress.
func (r *subscription) Remove() {
	if r == nil || !r.removed.CompareAndSwap(false, true) {
		return
	}
	r.b.unregister(r)
	r.mu.Lock()
	subs := r.subs
	r.subs = map[*cache.Wildcard]*endpointSub{}
	r.mu.Unlock()
	for _, s := range subs {
		_ = s.informer.RemoveEventHandler(s.reg)
	}
	// Wait for a call in progress on another goroutine.
	r.deliver.Lock()
	defer r.deliver.Unlock()
}

// HasSynced reports whether the handler has been told about every object of the logical
// clusters engaged so far: the initial list of each endpoint's informer has been delivered, and
// every logical cluster that engaged since has been announced.
func (r *subscription) HasSynced() bool {
	if r.pending.Load() > 0 {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.subs {
		if !s.reg.HasSynced() {
			return false
		}
	}
	return true
}

// subscribe adds the handler to shared's informer of the registration's type, unless it is there.
func (r *subscription) subscribe(ctx context.Context, shared *cache.Wildcard) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.removed.Load() || r.subs[shared] != nil {
		return nil
	}
	members := r.b.membersOn(shared)
	if len(members) == 0 {
		return nil
	}
	if err := members[0].view.Serves(r.obj); err != nil {
		return err
	}
	informer, err := shared.SharedInformer(ctx, r.obj, crcache.BlockUntilSynced(false))
	if err != nil {
		return err
	}
	reg, err := informer.AddEventHandler(r.forward(shared))
	if err != nil {
		return err
	}
	s := &endpointSub{informer: informer, reg: reg, covered: map[*member]bool{}}
	for _, m := range members {
		s.covered[m] = true
	}
	r.subs[shared] = s
	return nil
}

// announce tells the handler about the objects a logical cluster has as it engages: through
// the informer's initial list when the handler is new on its endpoint, by adds of the objects
// in the informer's index otherwise.
func (r *subscription) announce(m *member) {
	defer r.pending.Add(-1)
	shared := m.shared
	if err := r.subscribe(m.ctx, shared); err != nil {
		if m.ctx.Err() == nil && !r.removed.Load() {
			r.b.log.Error(err, "Cannot tell the fleet event handler about the logical cluster", "cluster", m.name, "endpoint", redact.Text(shared.URL()))
		}
		return
	}
	r.mu.Lock()
	s := r.subs[shared]
	covered := s != nil && s.covered[m]
	if s != nil {
		delete(s.covered, m)
	}
	r.mu.Unlock()
	if s == nil || covered {
		return
	}
	r.deliver.Lock()
	defer r.deliver.Unlock()
	// Read under deliver, so that the adds are at least as new as the events delivered before.
	objs, err := cache.ObjectsOf(s.informer, m.name)
	if err != nil {
		r.b.log.Error(err, "Cannot list the logical cluster's objects for the fleet event handler", "cluster", m.name, "endpoint", redact.Text(shared.URL()))
		return
	}
	for _, obj := range objs {
		if r.removed.Load() || !r.b.isMember(m) {
			continue
		}
		r.handler.OnAdd(multicluster.ClusterName(m.name), obj, true)
	}
}

// forget drops what the registration remembers of m, and its handler on shared (m's endpoint)
// when no logical cluster is engaged through that endpoint any more.
func (r *subscription) forget(m *member, shared *cache.Wildcard) {
	r.mu.Lock()
	s := r.subs[shared]
	if s == nil {
		r.mu.Unlock()
		return
	}
	delete(s.covered, m)
	// Checked under r.mu: an engagement through the endpoint that comes now subscribes afresh.
	idle := len(r.b.membersOn(shared)) == 0
	if idle {
		delete(r.subs, shared)
	}
	r.mu.Unlock()
	if idle {
		_ = s.informer.RemoveEventHandler(s.reg)
	}
}

// forward is the registration's handler on shared's informer: it passes on the events of the
// logical clusters engaged through shared, one at a time.
func (r *subscription) forward(shared *cache.Wildcard) toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, isInInitialList bool) {
			r.pass(shared, obj, func(name multicluster.ClusterName, o client.Object) { r.handler.OnAdd(name, o, isInInitialList) })
		},
		UpdateFunc: func(oldObj, newObj any) {
			old, ok := kit.ObjectOf(oldObj)
			if !ok {
				return
			}
			r.pass(shared, newObj, func(name multicluster.ClusterName, o client.Object) { r.handler.OnUpdate(name, old, o) })
		},
		DeleteFunc: func(obj any) {
			r.pass(shared, obj, func(name multicluster.ClusterName, o client.Object) { r.handler.OnDelete(name, o) })
		},
	}
}

func (r *subscription) pass(shared *cache.Wildcard, obj any, call func(multicluster.ClusterName, client.Object)) {
	o, ok := kit.ObjectOf(obj)
	if !ok {
		return
	}
	name := logicalcluster.From(o)
	r.deliver.Lock()
	defer r.deliver.Unlock()
	// Checked under deliver: once a logical cluster is disengaged or the registration removed,
	// no call starts.
	if r.removed.Load() || !r.b.serves(shared, name) {
		return
	}
	call(multicluster.ClusterName(name), o)
}
