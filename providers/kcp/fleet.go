// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kcp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	toolscache "k8s.io/client-go/tools/cache"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	kcpcache "github.com/kcp-dev/apimachinery/v2/pkg/cache"
	"github.com/kcp-dev/logicalcluster/v3"

	corefleet "mcr.dev/core/fleet"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
)

// Fleet returns the fleet-wide reader of the provider's engaged logical clusters: core's
// fleet.Reader (mcr.dev/core/fleet), reading the endpoints' shared caches (fleetBackend), so that
// fleet.ListItems, fleet.ListByCluster, fleet.InClusters and fleet.Registration serve it as they
// serve a reader of any other provider. A logical cluster takes part from the moment its
// engagement with the manager has completed until it is disengaged; objects of logical
// clusters that are not engaged (not ready, being disengaged, or refused by the manager) are
// never returned. It is cheap; every call returns a reader of the same state.
func (p *Provider) Fleet() *corefleet.Reader { return corefleet.NewWithBackend(fleetBackend{p: p}) }

// Fleet is core's fleet reader, which Provider.Fleet returns.
//
// Deprecated: use *fleet.Reader of mcr.dev/core/fleet.
type Fleet = corefleet.Reader

// InClusters restricts a fleet reader's List to the named logical clusters.
//
// Deprecated: use fleet.InClusters of mcr.dev/core/fleet, which this is.
type InClusters = corefleet.InClusters

// FleetRegistration is a handler added with the fleet reader's AddEventHandler.
//
// Deprecated: use *fleet.Registration of mcr.dev/core/fleet, which this is.
type FleetRegistration = corefleet.Registration

// ListByCluster lists as the fleet reader's List does and returns the listed objects by logical
// cluster.
//
// Deprecated: use fleet.ListByCluster of mcr.dev/core/fleet, which this calls.
func ListByCluster[T client.Object](ctx context.Context, reader *corefleet.Reader, list client.ObjectList, opts ...client.ListOption) (map[multicluster.ClusterName][]T, error) {
	return corefleet.ListByCluster[T](ctx, reader, list, opts...)
}

// fleetBackend reads the engaged logical clusters from the endpoints' shared caches: one read
// of each endpoint's informer, looked up in its indexes, instead of a request per logical
// cluster.
type fleetBackend struct{ p *Provider }

var _ corefleet.Backend = fleetBackend{}

// Start runs the provider until ctx ends, as kit.Members.Start does, engaging logical clusters
// with aware; the manager calls it. It passes every engagement through the provider's Fleet
// first, so that fleet-wide reads follow exactly the logical clusters the manager engaged.
func (p *Provider) Start(ctx context.Context, aware multicluster.Aware) error {
	return p.Members.Start(ctx, fleetAware{p: p, next: aware})
}

// fleetAware engages a logical cluster with the manager's Aware, then makes it part of the
// fleet-wide reads until the engagement's context ends.
type fleetAware struct {
	p    *Provider
	next multicluster.Aware
}

func (a fleetAware) Engage(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster) error {
	if a.next != nil {
		if err := a.next.Engage(ctx, name, cl); err != nil {
			return err
		}
	}
	if view, ok := cl.(*scopedCluster); ok {
		a.p.fleet.engaged(ctx, view)
	}
	return nil
}

// List reads each endpoint's shared informer of the type once, creating it on first use and
// waiting at most Options.CacheSyncTimeout for it to sync, and looks the engaged logical
// clusters up in its indexes; endpoints are read in parallel. A field selector matches fields
// indexed with the provider's IndexField. When an endpoint cannot be read, each logical
// cluster engaged through it fails with the endpoint's error (its URL redacted).
func (f fleetBackend) List(ctx context.Context, list client.ObjectList, o *client.ListOptions, only map[multicluster.ClusterName]bool) (corefleet.Listed, error) {
	var names map[logicalcluster.Name]bool
	if only != nil {
		names = map[logicalcluster.Name]bool{}
		for name := range only {
			names[logicalcluster.Name(name)] = true
		}
	}
	groups := f.p.fleet.byEndpoint(names)
	objs := make([][]client.Object, len(groups))
	errs := make([]error, len(groups))
	var wg sync.WaitGroup
	for i, g := range groups {
		wg.Go(func() {
			objs[i], errs[i] = f.listEndpoint(ctx, g, list, o)
			if errs[i] != nil {
				errs[i] = fmt.Errorf("endpoint %s: %w", kit.RedactText(g.endpoint.url), kit.Redact(errs[i]))
			}
		})
	}
	wg.Wait()

	listed := corefleet.Listed{Objects: map[multicluster.ClusterName][]client.Object{}, Failed: map[multicluster.ClusterName]error{}}
	for i, g := range groups {
		for _, m := range g.members {
			name := multicluster.ClusterName(m.name)
			if errs[i] != nil {
				listed.Failed[name] = errs[i]
			} else if _, ok := listed.Objects[name]; !ok {
				listed.Objects[name] = nil
			}
		}
		for _, obj := range objs[i] {
			name := multicluster.ClusterName(logicalcluster.From(obj))
			listed.Objects[name] = append(listed.Objects[name], obj)
		}
	}
	return listed, nil
}

// listEndpoint lists the objects of the engaged logical clusters of one endpoint: deep copies,
// with the list's item kind set.
func (f fleetBackend) listEndpoint(ctx context.Context, g endpointMembers, list client.ObjectList, o *client.ListOptions) ([]client.Object, error) {
	// The views of one endpoint share its wildcard cache, and what it serves.
	view := g.members[0].view.cache
	if err := view.serves(list); err != nil {
		return nil, err
	}
	wc := view.wc
	syncCtx, cancel := context.WithTimeout(ctx, f.p.opts.CacheSyncTimeout)
	defer cancel()
	inf, err := wc.informerFor(syncCtx, list)
	if err != nil {
		return nil, err
	}
	indexer := inf.informer.GetIndexer()
	namespace := o.Namespace
	if inf.mapping.Scope.Name() == apimeta.RESTScopeNameRoot {
		namespace = ""
	}
	var out []client.Object
	for _, m := range g.members {
		var items []any
		switch {
		case o.FieldSelector != nil && !o.FieldSelector.Empty():
			// The field indexes key their values by logical cluster, as a scoped List reads them.
			items, err = m.view.cache.byFields(indexer, o.FieldSelector, namespace)
		case namespace != "":
			items, err = indexer.ByIndex(kcpcache.ClusterAndNamespaceIndexName, kcpcache.ClusterAndNamespaceIndexKey(m.name, namespace))
		default:
			items, err = indexer.ByIndex(kcpcache.ClusterIndexName, kcpcache.ClusterIndexKey(m.name))
		}
		if err != nil {
			return nil, fmt.Errorf("logical cluster %s: %w", m.name, err)
		}
		for _, item := range items {
			obj, ok := item.(client.Object)
			if !ok {
				return nil, fmt.Errorf("cache contained %T, which is not an Object", item)
			}
			if o.LabelSelector != nil && !o.LabelSelector.Matches(labels.Set(obj.GetLabels())) {
				continue
			}
			c, ok := obj.DeepCopyObject().(client.Object)
			if !ok {
				return nil, fmt.Errorf("a copy of %T is not an Object", obj)
			}
			c.GetObjectKind().SetGroupVersionKind(inf.gvk)
			out = append(out, c)
		}
	}
	return out, nil
}

// FleetHandler is told about the objects of one type of every engaged logical cluster.
//
// Deprecated: use fleet.Handler of mcr.dev/core/fleet, which this is.
type FleetHandler = corefleet.Handler

// FleetHandlerFuncs is a FleetHandler of functions.
//
// Deprecated: use fleet.HandlerFuncs of mcr.dev/core/fleet, which this is.
type FleetHandlerFuncs = corefleet.HandlerFuncs

// AddEventHandler adds one event handler to the shared informer of the type of each endpoint
// that serves an engaged logical cluster (creating the informer there on first use) and filters
// by logical cluster, so that the cost is one registration per endpoint, not per logical
// cluster. When the type cannot be watched on an endpoint, the subscription is returned with a
// *fleet.PartialError naming the logical clusters engaged through it; their events follow once
// the next logical cluster of that endpoint engages. ctx bounds the creation of the informers
// only. OnUpdate is also called on every resync of the shared informer; OnDelete gets the last
// state known, which may be stale when the watch missed the deletion.
func (f fleetBackend) AddEventHandler(ctx context.Context, obj client.Object, handler corefleet.Handler) (corefleet.Subscription, error) {
	if obj == nil || handler == nil {
		return nil, errors.New("kcp provider: AddEventHandler needs an object and a handler")
	}
	r := &fleetSubscription{p: f.p, obj: obj, handler: handler, subs: map[*endpoint]*fleetSub{}}
	failed := map[multicluster.ClusterName]error{}
	tried := 0
	for _, ep := range f.p.fleet.register(r) {
		members := f.p.fleet.membersOn(ep)
		tried += len(members)
		if err := r.subscribe(ctx, ep); err != nil {
			err = fmt.Errorf("endpoint %s: %w", kit.RedactText(ep.url), kit.Redact(err))
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

// fleetSubscription is a handler added with fleetBackend.AddEventHandler.
type fleetSubscription struct {
	p       *Provider
	obj     client.Object
	handler corefleet.Handler
	removed atomic.Bool
	// pending counts the engagements of logical clusters not announced to the handler yet.
	pending atomic.Int64

	// mu guards subs.
	mu   sync.Mutex
	subs map[*endpoint]*fleetSub

	// deliver is held while the handler is called, so that its calls are serial.
	deliver sync.Mutex
}

// fleetSub is the registration's event handler on one endpoint's shared informer.
type fleetSub struct {
	informer toolscache.SharedIndexInformer
	reg      toolscache.ResourceEventHandlerRegistration
	// covered holds the members engaged through the endpoint when the handler was added there:
	// the informer's initial list announces them, so their engagement need not.
	covered map[*fleetMember]bool
}

// Remove removes the handler from every endpoint's informer, and waits for a call in progress.
func (r *fleetSubscription) Remove() {
	if r == nil || !r.removed.CompareAndSwap(false, true) {
		return
	}
	r.p.fleet.unregister(r)
	r.mu.Lock()
	subs := r.subs
	r.subs = map[*endpoint]*fleetSub{}
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
func (r *fleetSubscription) HasSynced() bool {
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

// subscribe adds the handler to ep's informer of the registration's type, unless it is there.
func (r *fleetSubscription) subscribe(ctx context.Context, ep *endpoint) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.removed.Load() || r.subs[ep] != nil {
		return nil
	}
	members := r.p.fleet.membersOn(ep)
	if len(members) == 0 {
		return nil
	}
	view := members[0].view.cache
	if err := view.serves(r.obj); err != nil {
		return err
	}
	informer, err := view.wc.sharedInformer(ctx, r.obj, cache.BlockUntilSynced(false))
	if err != nil {
		return err
	}
	reg, err := informer.AddEventHandler(r.forward(ep))
	if err != nil {
		return err
	}
	s := &fleetSub{informer: informer, reg: reg, covered: map[*fleetMember]bool{}}
	for _, m := range members {
		s.covered[m] = true
	}
	r.subs[ep] = s
	return nil
}

// announce tells the handler about the objects a logical cluster has as it engages: through
// the informer's initial list when the handler is new on its endpoint, by adds of the objects
// in the informer's index otherwise.
func (r *fleetSubscription) announce(m *fleetMember) {
	defer r.pending.Add(-1)
	ep := m.view.endpoint
	if err := r.subscribe(m.ctx, ep); err != nil {
		if m.ctx.Err() == nil && !r.removed.Load() {
			r.p.log.Error(err, "Cannot tell the fleet event handler about the logical cluster", "cluster", m.name, "endpoint", kit.RedactText(ep.url))
		}
		return
	}
	r.mu.Lock()
	s := r.subs[ep]
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
	items, err := s.informer.GetIndexer().ByIndex(kcpcache.ClusterIndexName, kcpcache.ClusterIndexKey(m.name))
	if err != nil {
		r.p.log.Error(err, "Cannot list the logical cluster's objects for the fleet event handler", "cluster", m.name, "endpoint", kit.RedactText(ep.url))
		return
	}
	for _, item := range items {
		obj, ok := item.(client.Object)
		if !ok || r.removed.Load() || !r.p.fleet.isMember(m) {
			continue
		}
		r.handler.OnAdd(multicluster.ClusterName(m.name), obj, true)
	}
}

// forget drops what the registration remembers of m, and its handler on ep when no logical
// cluster is engaged through ep any more.
func (r *fleetSubscription) forget(m *fleetMember, ep *endpoint) {
	r.mu.Lock()
	s := r.subs[ep]
	if s == nil {
		r.mu.Unlock()
		return
	}
	delete(s.covered, m)
	// Checked under r.mu: an engagement through ep that comes now subscribes afresh.
	idle := len(r.p.fleet.membersOn(ep)) == 0
	if idle {
		delete(r.subs, ep)
	}
	r.mu.Unlock()
	if idle {
		_ = s.informer.RemoveEventHandler(s.reg)
	}
}

// forward is the registration's handler on ep's informer: it passes on the events of the
// logical clusters engaged through ep, one at a time.
func (r *fleetSubscription) forward(ep *endpoint) toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, isInInitialList bool) {
			r.pass(ep, obj, func(name multicluster.ClusterName, o client.Object) { r.handler.OnAdd(name, o, isInInitialList) })
		},
		UpdateFunc: func(oldObj, newObj any) {
			old, ok := kit.ObjectOf(oldObj)
			if !ok {
				return
			}
			r.pass(ep, newObj, func(name multicluster.ClusterName, o client.Object) { r.handler.OnUpdate(name, old, o) })
		},
		DeleteFunc: func(obj any) {
			r.pass(ep, obj, func(name multicluster.ClusterName, o client.Object) { r.handler.OnDelete(name, o) })
		},
	}
}

func (r *fleetSubscription) pass(ep *endpoint, obj any, call func(multicluster.ClusterName, client.Object)) {
	o, ok := kit.ObjectOf(obj)
	if !ok {
		return
	}
	name := logicalcluster.From(o)
	r.deliver.Lock()
	defer r.deliver.Unlock()
	// Checked under deliver: once a logical cluster is disengaged or the registration removed,
	// no call starts.
	if r.removed.Load() || !r.p.fleet.serves(ep, name) {
		return
	}
	call(multicluster.ClusterName(name), o)
}

// fleetHub knows which logical clusters are engaged, through which endpoint, for the fleet-wide
// reads, and the fleet event handlers. Its zero value is ready to use.
type fleetHub struct {
	mu      sync.RWMutex
	members map[logicalcluster.Name]*fleetMember
	regs    map[*fleetSubscription]bool
}

// fleetMember is one engagement of a logical cluster with the manager.
type fleetMember struct {
	name logicalcluster.Name
	view *scopedCluster
	// ctx is the engagement's context: it ends when the logical cluster is disengaged.
	ctx context.Context
}

// engaged makes view, engaged with the manager until ctx ends, part of the fleet-wide reads,
// in place of an earlier engagement of its name, and announces it to the event handlers.
func (h *fleetHub) engaged(ctx context.Context, view *scopedCluster) {
	m := &fleetMember{name: view.name, view: view, ctx: ctx}
	h.mu.Lock()
	if h.members == nil {
		h.members = map[logicalcluster.Name]*fleetMember{}
	}
	prev := h.members[m.name]
	h.members[m.name] = m
	regs := make([]*fleetSubscription, 0, len(h.regs))
	for r := range h.regs {
		r.pending.Add(1)
		regs = append(regs, r)
	}
	h.mu.Unlock()
	context.AfterFunc(ctx, func() { h.disengaged(m) })
	if prev != nil {
		h.forgetIn(prev)
	}
	if len(regs) == 0 {
		return
	}
	// Not in the engagement's path: a handler may be slow, and the informer may be new.
	go func() {
		for _, r := range regs {
			r.announce(m)
		}
	}()
}

// disengaged removes m from the fleet-wide reads, unless a newer engagement replaced it.
func (h *fleetHub) disengaged(m *fleetMember) {
	h.mu.Lock()
	current := h.members[m.name] == m
	if current {
		delete(h.members, m.name)
	}
	h.mu.Unlock()
	if current {
		h.forgetIn(m)
	}
}

// forgetIn tells every registration that m is no longer engaged.
func (h *fleetHub) forgetIn(m *fleetMember) {
	for _, r := range h.registrations() {
		r.forget(m, m.view.endpoint)
	}
}

func (h *fleetHub) registrations() []*fleetSubscription {
	h.mu.RLock()
	defer h.mu.RUnlock()
	regs := make([]*fleetSubscription, 0, len(h.regs))
	for r := range h.regs {
		regs = append(regs, r)
	}
	return regs
}

// register adds r and returns the endpoints that serve engaged logical clusters now.
func (h *fleetHub) register(r *fleetSubscription) []*endpoint {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.regs == nil {
		h.regs = map[*fleetSubscription]bool{}
	}
	h.regs[r] = true
	var eps []*endpoint
	for _, m := range h.members {
		if !slices.Contains(eps, m.view.endpoint) {
			eps = append(eps, m.view.endpoint)
		}
	}
	return eps
}

func (h *fleetHub) unregister(r *fleetSubscription) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.regs, r)
}

// isMember reports whether m is the current engagement of its logical cluster.
func (h *fleetHub) isMember(m *fleetMember) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.members[m.name] == m && m.ctx.Err() == nil
}

// serves reports whether the logical cluster name is engaged through ep.
func (h *fleetHub) serves(ep *endpoint, name logicalcluster.Name) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	m := h.members[name]
	return m != nil && m.view.endpoint == ep && m.ctx.Err() == nil
}

// membersOn returns the engagements through ep.
func (h *fleetHub) membersOn(ep *endpoint) []*fleetMember {
	h.mu.RLock()
	defer h.mu.RUnlock()
	var members []*fleetMember
	for _, m := range h.members {
		if m.view.endpoint == ep && m.ctx.Err() == nil {
			members = append(members, m)
		}
	}
	return members
}

// endpointMembers are the engaged logical clusters of one endpoint.
type endpointMembers struct {
	endpoint *endpoint
	members  []*fleetMember
}

// byEndpoint returns the engaged logical clusters (those in only, when it is not nil) by
// endpoint, in the order of the endpoints' URLs and the logical clusters' names.
func (h *fleetHub) byEndpoint(only map[logicalcluster.Name]bool) []endpointMembers {
	h.mu.RLock()
	var groups []endpointMembers
	for name, m := range h.members {
		if m.ctx.Err() != nil || only != nil && !only[name] {
			continue
		}
		i := slices.IndexFunc(groups, func(g endpointMembers) bool { return g.endpoint == m.view.endpoint })
		if i < 0 {
			groups = append(groups, endpointMembers{endpoint: m.view.endpoint})
			i = len(groups) - 1
		}
		groups[i].members = append(groups[i].members, m)
	}
	h.mu.RUnlock()
	slices.SortFunc(groups, func(a, b endpointMembers) int { return strings.Compare(a.endpoint.url, b.endpoint.url) })
	for _, g := range groups {
		slices.SortFunc(g.members, func(a, b *fleetMember) int { return strings.Compare(a.name.String(), b.name.String()) })
	}
	return groups
}
