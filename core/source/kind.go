// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package source

import (
	"context"
	"errors"
	"fmt"
	"sync"

	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	mchandler "mcr.dev/core/handler"
	"mcr.dev/core/internal/served"
	"mcr.dev/core/multicluster"
	mcreconcile "mcr.dev/core/reconcile"
)

// Kind watches objects of obj's type in every engaged cluster and passes their events, filtered
// by predicates, to the handler built for that cluster.
func Kind[object client.Object](obj object, h mchandler.TypedEventHandlerFunc[object, mcreconcile.Request], predicates ...predicate.TypedPredicate[object]) SyncingSource[object] {
	return TypedKind(obj, h, predicates...)
}

// TypedKind is Kind for custom request types.
func TypedKind[object client.Object, request mcreconcile.ClusterAware[request]](obj object, h mchandler.TypedEventHandlerFunc[object, request], predicates ...predicate.TypedPredicate[object]) TypedSyncingSource[object, request] {
	return &kind[object, request]{obj: obj, handler: h, predicates: predicates}
}

type kind[object client.Object, request mcreconcile.ClusterAware[request]] struct {
	obj        object
	handler    mchandler.TypedEventHandlerFunc[object, request]
	predicates []predicate.TypedPredicate[object]
	projection func(cluster.Cluster, object) (object, error)
	filter     ClusterFilterFunc
}

func (k *kind[object, request]) WithProjection(p func(cluster.Cluster, object) (object, error)) TypedSyncingSource[object, request] {
	k.projection = p
	return k
}

func (k *kind[object, request]) WithClusterFilter(f ClusterFilterFunc) TypedSyncingSource[object, request] {
	k.filter = f
	return k
}

func (k *kind[object, request]) ForCluster(name multicluster.ClusterName, cl cluster.Cluster) (source.TypedSource[request], bool, error) {
	return k.SyncingForCluster(name, cl)
}

func (k *kind[object, request]) SyncingForCluster(name multicluster.ClusterName, cl cluster.Cluster) (source.TypedSyncingSource[request], bool, error) {
	obj := k.obj
	if k.projection != nil {
		projected, err := k.projection(cl, obj)
		if err != nil {
			return nil, false, fmt.Errorf("projecting %T for cluster %q: %w", k.obj, name, err)
		}
		obj = projected
	}
	// The filter runs first and a filtered cluster is not touched (its cache, its handler) until
	// the returned source is started, as multicluster-runtime does: callers that start a source
	// whatever the filter says (the local cluster) still get a working one.
	engage := k.filter == nil || k.filter(name, cl)
	src := &clusterKind[object, request]{
		obj:        obj,
		cl:         cl,
		newHandler: func() handler.TypedEventHandler[object, request] { return k.handler(name, cl) },
		predicates: k.predicates,
		registered: make(chan struct{}),
	}
	return src, engage, nil
}

func (k *kind[object, request]) String() string {
	return fmt.Sprintf("kind source: %T", k.obj)
}

// clusterKind is the source of one object type in one cluster.
type clusterKind[object client.Object, request comparable] struct {
	obj        object
	cl         cluster.Cluster
	newHandler func() handler.TypedEventHandler[object, request]
	predicates []predicate.TypedPredicate[object]

	startOnce    sync.Once
	registered   chan struct{}
	registration toolscache.ResourceEventHandlerRegistration
	startErr     error
	// ctx ends when the source stops: its start context ends or the cluster stops serving the
	// kind.
	ctx context.Context
	// notServed, when set before Start, is called once the cluster stops serving the kind.
	notServed func(error)
}

// OnNotServed makes the source call f, once, when the cluster stops serving its kind (its CRD
// is deleted) after the source started: the source has stopped then and its informer is removed
// from the cluster's cache (see "Kinds that go away" in the package doc). Call it before Start.
// The multi-cluster controller uses it to park the source until the kind returns.
func (s *clusterKind[object, request]) OnNotServed(f func(error)) { s.notServed = f }

// Start registers the event handler on the cluster's informer. It does not wait for the informer
// to sync (see WaitForSync); the registration is removed when ctx ends.
func (s *clusterKind[object, request]) Start(ctx context.Context, q workqueue.TypedRateLimitingInterface[request]) error {
	started := false
	s.startOnce.Do(func() {
		started = true
		defer close(s.registered)
		s.startErr = s.register(ctx, q)
	})
	if !started {
		return errors.New("kind source can only be started once")
	}
	return s.startErr
}

func (s *clusterKind[object, request]) register(ctx context.Context, q workqueue.TypedRateLimitingInterface[request]) error {
	// A kind that went away while watched is still mapped by the cluster's REST mapper: only
	// discovery tells whether it returned.
	if err := served.Check(ctx, s.cl, s.obj); err != nil {
		return fmt.Errorf("getting informer for %T: %w", s.obj, err)
	}
	ctx, stop := context.WithCancel(ctx)
	s.ctx = ctx
	h := &eventHandler[object, request]{
		ctx:        ctx,
		queue:      q,
		handler:    s.newHandler(),
		predicates: s.predicates,
	}
	reg, err := AddRecoverableHandler(ctx, s.cl, s.obj, h)
	if err != nil {
		stop()
		return err
	}
	s.registration = reg
	served.Watch(ctx, s.cl, s.obj, func(err error) {
		stop()
		if s.notServed != nil {
			s.notServed(err)
		}
	})
	return nil
}

// AddRecoverableHandler registers h on the informer of obj in cl's cache, as a Kind source does,
// and removes it when ctx ends. When cl stops answering and answers again, the informer is
// restarted at once and h gets what a resumed watch would have brought (see "Members that come
// back" in the package doc), instead of waiting for client-go's watch backoff. Providers use it
// for the host cluster they run themselves.
//
// Informers that cannot be restarted (those of a manager's own cluster, which other
// controllers share, and of caches that are not client-go's) get h as they are and resume on
// client-go's backoff.
func AddRecoverableHandler(ctx context.Context, cl cluster.Cluster, obj client.Object, h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	if member := recoverableMember(cl); member != nil {
		reg, ok, err := members.register(ctx, member, obj, h)
		if err != nil {
			return nil, err
		}
		if ok {
			return reg, nil
		}
	}
	informer, err := cl.GetCache().GetInformer(ctx, obj, cache.BlockUntilSynced(false))
	if err != nil {
		return nil, fmt.Errorf("getting informer for %T: %w", obj, err)
	}
	reg, err := informer.AddEventHandlerWithOptions(h, toolscache.HandlerOptions{})
	if err != nil {
		return nil, fmt.Errorf("registering handler for %T: %w", obj, err)
	}
	// A callback instead of a goroutine: nothing of this registration runs while it lasts.
	context.AfterFunc(ctx, func() { _ = informer.RemoveEventHandler(reg) })
	return reg, nil
}

// WaitForSync blocks until the informer has synced and the initial list has been handed to the
// handler, or ctx ends.
func (s *clusterKind[object, request]) WaitForSync(ctx context.Context) error {
	select {
	case <-s.registered:
	case <-ctx.Done():
		return fmt.Errorf("waiting for %T source to start: %w", s.obj, ctx.Err())
	}
	if s.startErr != nil {
		return s.startErr
	}
	select {
	case <-s.registration.HasSyncedChecker().Done():
		return nil
	case <-s.ctx.Done():
		return fmt.Errorf("waiting for %T cache to sync: the source stopped: %w", s.obj, s.ctx.Err())
	case <-ctx.Done():
		return fmt.Errorf("waiting for %T cache to sync: %w", s.obj, ctx.Err())
	}
}

func (s *clusterKind[object, request]) String() string {
	return fmt.Sprintf("kind source: %T", s.obj)
}

// eventHandler turns informer notifications into typed events for one engaged cluster.
type eventHandler[object client.Object, request comparable] struct {
	ctx        context.Context
	queue      workqueue.TypedRateLimitingInterface[request]
	handler    handler.TypedEventHandler[object, request]
	predicates []predicate.TypedPredicate[object]
}

func (e *eventHandler[object, request]) OnAdd(obj any, isInInitialList bool) {
	o, ok := obj.(object)
	if !ok || e.ctx.Err() != nil {
		return
	}
	evt := event.TypedCreateEvent[object]{Object: o, IsInInitialList: isInInitialList}
	for _, p := range e.predicates {
		if !p.Create(evt) {
			return
		}
	}
	e.handler.Create(e.ctx, evt, e.queue)
}

func (e *eventHandler[object, request]) OnUpdate(oldObj, newObj any) {
	o, ok := oldObj.(object)
	n, ok2 := newObj.(object)
	if !ok || !ok2 || e.ctx.Err() != nil {
		return
	}
	evt := event.TypedUpdateEvent[object]{ObjectOld: o, ObjectNew: n}
	for _, p := range e.predicates {
		if !p.Update(evt) {
			return
		}
	}
	e.handler.Update(e.ctx, evt, e.queue)
}

func (e *eventHandler[object, request]) OnDelete(obj any) {
	if e.ctx.Err() != nil {
		return
	}
	evt := event.TypedDeleteEvent[object]{}
	if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		evt.DeleteStateUnknown = true
		obj = tombstone.Obj
	}
	o, ok := obj.(object)
	if !ok {
		return
	}
	evt.Object = o
	for _, p := range e.predicates {
		if !p.Delete(evt) {
			return
		}
	}
	e.handler.Delete(e.ctx, evt, e.queue)
}
