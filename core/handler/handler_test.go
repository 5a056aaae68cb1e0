// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package handler_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	mchandler "mcr.dev/core/handler"
	"mcr.dev/core/multicluster"
	mcreconcile "mcr.dev/core/reconcile"
)

func cm(ns, name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

func req(cl multicluster.ClusterName, ns, name string) mcreconcile.Request {
	return mcreconcile.Request{ClusterName: cl, Request: reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}
}

// Lifted handlers inject the cluster and keep priority-queue semantics: objects of the initial
// list are enqueued with low priority, live events with normal priority.
func TestLiftKeepsPriorities(t *testing.T) {
	q := priorityqueue.New[mcreconcile.Request]("lift-test")
	defer q.ShutDown()
	h := mchandler.Lift(&handler.EnqueueRequestForObject{})("east", nil)
	ctx := context.Background()
	h.Create(ctx, event.CreateEvent{Object: cm("ns", "initial"), IsInInitialList: true}, q)
	h.Create(ctx, event.CreateEvent{Object: cm("ns", "live")}, q)

	got := map[mcreconcile.Request]int{}
	for range 2 {
		item, prio, shutdown := q.GetWithPriority()
		if shutdown {
			t.Fatal("queue shut down")
		}
		got[item] = prio
		q.Done(item)
	}
	if p, ok := got[req("east", "ns", "live")]; !ok || p != 0 {
		t.Fatalf("live event: got %v", got)
	}
	if p, ok := got[req("east", "ns", "initial")]; !ok || p >= 0 {
		t.Fatalf("initial-list event should have low priority: got %v", got)
	}
}

// With a plain rate-limiting queue, the lifted handler falls back to its ordinary calls.
func TestLiftOnPlainQueue(t *testing.T) {
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[mcreconcile.Request]())
	defer q.ShutDown()
	h := mchandler.Lift(&handler.EnqueueRequestForObject{})("west", nil)
	h.Update(context.Background(), event.UpdateEvent{ObjectOld: cm("ns", "o"), ObjectNew: cm("ns", "o")}, q)
	item, _ := q.Get()
	if item != req("west", "ns", "o") {
		t.Fatalf("got %v", item)
	}
}

// Map functions see the source cluster and choose the target cluster of every request.
func TestClusterMapFuncFansOut(t *testing.T) {
	q := priorityqueue.New[mcreconcile.Request]("fanout-test")
	defer q.ShutDown()
	fn := mchandler.EnqueueRequestsFromClusterMapFunc(func(_ context.Context, source multicluster.ClusterName, obj client.Object) []mcreconcile.Request {
		return []mcreconcile.Request{req("", "hub", string(source)+"-"+obj.GetName()), req(source, obj.GetNamespace(), obj.GetName())}
	})
	fn("member-1", nil).Create(context.Background(), event.CreateEvent{Object: cm("ns", "o")}, q)
	want := map[mcreconcile.Request]bool{req("", "hub", "member-1-o"): true, req("member-1", "ns", "o"): true}
	for range 2 {
		item, _ := q.Get()
		if !want[item] {
			t.Fatalf("unexpected request %v", item)
		}
		delete(want, item)
		q.Done(item)
	}
}

// TypedEnqueueRequestsFromMapFunc rebinds whatever the map function returns to the source cluster.
func TestMapFuncIsBoundToSourceCluster(t *testing.T) {
	q := priorityqueue.New[mcreconcile.Request]("bound-test")
	defer q.ShutDown()
	fn := mchandler.TypedEnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []mcreconcile.Request {
		return []mcreconcile.Request{req("elsewhere", obj.GetNamespace(), "owner")}
	})
	fn("src", nil).Delete(context.Background(), event.DeleteEvent{Object: cm("ns", "o")}, q)
	if item, _ := q.Get(); item != req("src", "ns", "owner") {
		t.Fatalf("got %v, want the source cluster", item)
	}
}
