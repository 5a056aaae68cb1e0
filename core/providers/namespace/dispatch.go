// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package namespace

import (
	"errors"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"

	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// dispatcher is the single event handler this provider registers on one host informer. It
// hands each event to the handlers registered for the event's namespace only: a map lookup, so
// the cost of an event is independent of the number of namespace-clusters.
//
// Handlers are called with the dispatcher's lock held, which serializes them per informer the
// way client-go serializes the calls of one handler, and orders the replay of existing objects
// for a new handler before any live event reaches it.
type dispatcher struct {
	informer cache.Informer

	mu     sync.Mutex
	shared toolscache.ResourceEventHandlerRegistration
	// byNamespace holds the handlers per host namespace; cluster-scoped kinds use "".
	byNamespace map[string]map[*registration]struct{}
}

// registration is one handler of one namespace-cluster on one dispatcher. It implements
// client-go's ResourceEventHandlerRegistration.
type registration struct {
	dispatcher *dispatcher
	namespace  string // host namespace, or "" for a cluster-scoped kind
	rewrite    bool   // show objects in InnerNamespace
	handler    toolscache.ResourceEventHandler
}

func newDispatcher(informer cache.Informer) (*dispatcher, error) {
	d := &dispatcher{informer: informer, byNamespace: map[string]map[*registration]struct{}{}}
	d.mu.Lock() // until shared is set: HasSynced of early registrations needs it
	defer d.mu.Unlock()
	shared, err := informer.AddEventHandler(toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc:    d.onAdd,
		UpdateFunc: d.onUpdate,
		DeleteFunc: d.onDelete,
	})
	if err != nil {
		return nil, err
	}
	d.shared = shared
	return d, nil
}

// add registers handler for the objects of namespace, after replaying the objects the informer
// already has, as client-go does for a handler added to a running informer.
func (d *dispatcher) add(namespace string, rewrite bool, handler toolscache.ResourceEventHandler) *registration {
	r := &registration{dispatcher: d, namespace: namespace, rewrite: rewrite, handler: handler}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, obj := range d.existing(namespace) {
		handler.OnAdd(r.view(obj), true)
	}
	if d.byNamespace[namespace] == nil {
		d.byNamespace[namespace] = map[*registration]struct{}{}
	}
	d.byNamespace[namespace][r] = struct{}{}
	return r
}

func (d *dispatcher) remove(r *registration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.byNamespace[r.namespace], r)
	if len(d.byNamespace[r.namespace]) == 0 {
		delete(d.byNamespace, r.namespace)
	}
}

// handlers returns how many handlers are registered, for tests.
func (d *dispatcher) handlers() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, rs := range d.byNamespace {
		n += len(rs)
	}
	return n
}

// existing lists the informer's current objects in namespace.
func (d *dispatcher) existing(namespace string) []any {
	if indexed, ok := d.informer.(interface{ GetIndexer() toolscache.Indexer }); ok {
		if objs, err := indexed.GetIndexer().ByIndex(toolscache.NamespaceIndex, namespace); err == nil {
			return objs
		}
	}
	stored, ok := d.informer.(interface{ GetStore() toolscache.Store })
	if !ok {
		return nil
	}
	var objs []any
	for _, obj := range stored.GetStore().List() {
		if namespaceOf(obj) == namespace {
			objs = append(objs, obj)
		}
	}
	return objs
}

func (d *dispatcher) onAdd(obj any, isInInitialList bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for r := range d.byNamespace[namespaceOf(obj)] {
		r.handler.OnAdd(r.view(obj), isInInitialList)
	}
}

func (d *dispatcher) onUpdate(oldObj, newObj any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for r := range d.byNamespace[namespaceOf(newObj)] {
		r.handler.OnUpdate(r.view(oldObj), r.view(newObj))
	}
}

func (d *dispatcher) onDelete(obj any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for r := range d.byNamespace[namespaceOf(obj)] {
		r.handler.OnDelete(r.view(obj))
	}
}

// namespaceOf returns the namespace of an informer object or of a tombstone.
func namespaceOf(obj any) string {
	if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		if a, err := meta.Accessor(tombstone.Obj); err == nil {
			return a.GetNamespace()
		}
		ns, _, _ := toolscache.SplitMetaNamespaceKey(tombstone.Key)
		return ns
	}
	if a, err := meta.Accessor(obj); err == nil {
		return a.GetNamespace()
	}
	return ""
}

// view returns obj as the namespace-cluster sees it: a deep copy in InnerNamespace, so the
// shared cache object stays untouched. Tombstones keep their shape.
func (r *registration) view(obj any) any {
	if !r.rewrite {
		return obj
	}
	if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		_, name, _ := toolscache.SplitMetaNamespaceKey(tombstone.Key)
		return toolscache.DeletedFinalStateUnknown{Key: InnerNamespace + "/" + name, Obj: r.view(tombstone.Obj)}
	}
	robj, ok := obj.(runtime.Object)
	if !ok {
		return obj
	}
	cp := robj.DeepCopyObject()
	if a, err := meta.Accessor(cp); err == nil {
		a.SetNamespace(InnerNamespace)
	}
	return cp
}

func (r *registration) HasSynced() bool {
	return r.dispatcher.shared.HasSynced()
}

func (r *registration) HasSyncedChecker() toolscache.DoneChecker {
	return r.dispatcher.shared.HasSyncedChecker()
}

// scopedInformer is the informer of one kind as one namespace-cluster sees it: a view of the
// shared host informer. Resync periods are not supported per namespace-cluster and are ignored;
// handlers get the host informer's resyncs.
type scopedInformer struct {
	dispatcher *dispatcher
	owner      *handlerSet
	namespace  string
	rewrite    bool
}

var _ cache.Informer = &scopedInformer{}

func (i *scopedInformer) AddEventHandler(handler toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.owner.add(i.dispatcher, i.namespace, i.rewrite, handler)
}

func (i *scopedInformer) AddEventHandlerWithResyncPeriod(handler toolscache.ResourceEventHandler, _ time.Duration) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.AddEventHandler(handler)
}

func (i *scopedInformer) AddEventHandlerWithOptions(handler toolscache.ResourceEventHandler, _ toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.AddEventHandler(handler)
}

func (i *scopedInformer) RemoveEventHandler(handle toolscache.ResourceEventHandlerRegistration) error {
	r, ok := handle.(*registration)
	if !ok || r.dispatcher != i.dispatcher {
		return errors.New("namespace provider: the registration does not belong to this informer")
	}
	i.owner.remove(r)
	return nil
}

// AddIndexers adds indexers to the shared host informer; their functions see objects in their
// real namespaces.
func (i *scopedInformer) AddIndexers(indexers toolscache.Indexers) error {
	return i.dispatcher.informer.AddIndexers(indexers)
}

func (i *scopedInformer) HasSynced() bool { return i.dispatcher.informer.HasSynced() }

func (i *scopedInformer) HasSyncedChecker() toolscache.DoneChecker {
	return i.dispatcher.informer.HasSyncedChecker()
}

func (i *scopedInformer) IsStopped() bool { return i.dispatcher.informer.IsStopped() }

// handlerSet tracks the registrations of one namespace-cluster, so that disengaging it removes
// them all; a disengaged namespace-cluster accepts no new handler.
type handlerSet struct {
	mu     sync.Mutex
	closed bool
	regs   map[*registration]struct{}
}

func newHandlerSet() *handlerSet {
	return &handlerSet{regs: map[*registration]struct{}{}}
}

func (s *handlerSet) add(d *dispatcher, namespace string, rewrite bool, handler toolscache.ResourceEventHandler) (*registration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("namespace provider: the namespace-cluster was disengaged")
	}
	r := d.add(namespace, rewrite, handler)
	s.regs[r] = struct{}{}
	return r, nil
}

func (s *handlerSet) remove(r *registration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.regs[r]; ok {
		delete(s.regs, r)
		r.dispatcher.remove(r)
	}
}

// removeIn removes the registrations on one dispatcher.
func (s *handlerSet) removeIn(d *dispatcher) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for r := range s.regs {
		if r.dispatcher == d {
			delete(s.regs, r)
			d.remove(r)
		}
	}
}

// close removes every registration and refuses new ones.
func (s *handlerSet) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for r := range s.regs {
		r.dispatcher.remove(r)
	}
	clear(s.regs)
}
