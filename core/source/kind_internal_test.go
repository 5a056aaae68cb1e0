// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package source

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	mcreconcile "mcr.dev/core/reconcile"
)

// recorder is an event handler that remembers the events it got.
type recorder struct {
	creates []event.TypedCreateEvent[*corev1.ConfigMap]
	deletes []event.TypedDeleteEvent[*corev1.ConfigMap]
	updates int
}

func (r *recorder) Create(_ context.Context, e event.TypedCreateEvent[*corev1.ConfigMap], _ workqueue.TypedRateLimitingInterface[mcreconcile.Request]) {
	r.creates = append(r.creates, e)
}

func (r *recorder) Update(context.Context, event.TypedUpdateEvent[*corev1.ConfigMap], workqueue.TypedRateLimitingInterface[mcreconcile.Request]) {
	r.updates++
}

func (r *recorder) Delete(_ context.Context, e event.TypedDeleteEvent[*corev1.ConfigMap], _ workqueue.TypedRateLimitingInterface[mcreconcile.Request]) {
	r.deletes = append(r.deletes, e)
}

func (r *recorder) Generic(context.Context, event.TypedGenericEvent[*corev1.ConfigMap], workqueue.TypedRateLimitingInterface[mcreconcile.Request]) {
}

var _ handler.TypedEventHandler[*corev1.ConfigMap, mcreconcile.Request] = &recorder{}

func newHandler(ctx context.Context, r *recorder, p ...predicate.TypedPredicate[*corev1.ConfigMap]) *eventHandler[*corev1.ConfigMap, mcreconcile.Request] {
	return &eventHandler[*corev1.ConfigMap, mcreconcile.Request]{ctx: ctx, handler: r, predicates: p}
}

func configMap(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
}

func TestEventHandlerMarksInitialList(t *testing.T) {
	r := &recorder{}
	h := newHandler(context.Background(), r)
	h.OnAdd(configMap("a"), true)
	h.OnAdd(configMap("b"), false)
	if len(r.creates) != 2 || !r.creates[0].IsInInitialList || r.creates[1].IsInInitialList {
		t.Fatalf("got %+v", r.creates)
	}
}

func TestEventHandlerUnwrapsTombstones(t *testing.T) {
	r := &recorder{}
	h := newHandler(context.Background(), r)
	h.OnDelete(toolscache.DeletedFinalStateUnknown{Key: "ns/gone", Obj: configMap("gone")})
	h.OnDelete(configMap("plain"))
	h.OnDelete(toolscache.DeletedFinalStateUnknown{Key: "ns/odd", Obj: "not an object"})
	if len(r.deletes) != 2 {
		t.Fatalf("got %d delete events, want 2", len(r.deletes))
	}
	if !r.deletes[0].DeleteStateUnknown || r.deletes[0].Object.Name != "gone" {
		t.Fatalf("tombstone not unwrapped: %+v", r.deletes[0])
	}
	if r.deletes[1].DeleteStateUnknown {
		t.Fatalf("plain delete marked as unknown state")
	}
}

func TestEventHandlerAppliesPredicates(t *testing.T) {
	r := &recorder{}
	onlyA := predicate.NewTypedPredicateFuncs(func(o *corev1.ConfigMap) bool { return o.Name == "a" })
	h := newHandler(context.Background(), r, onlyA)
	h.OnAdd(configMap("a"), false)
	h.OnAdd(configMap("b"), false)
	h.OnUpdate(configMap("b"), configMap("b"))
	h.OnUpdate(configMap("a"), configMap("a"))
	if len(r.creates) != 1 || r.creates[0].Object.Name != "a" || r.updates != 1 {
		t.Fatalf("predicates not applied: creates %+v updates %d", r.creates, r.updates)
	}
}

// Events that arrive after the cluster was disengaged are dropped.
func TestEventHandlerDropsEventsAfterDisengage(t *testing.T) {
	r := &recorder{}
	ctx, cancel := context.WithCancel(context.Background())
	h := newHandler(ctx, r)
	cancel()
	h.OnAdd(configMap("late"), false)
	h.OnDelete(configMap("late"))
	if len(r.creates)+len(r.deletes) != 0 {
		t.Fatalf("events delivered after disengage: %+v %+v", r.creates, r.deletes)
	}
}
