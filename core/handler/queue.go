// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package handler

import (
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"mcr.dev/core/multicluster"
	mcreconcile "mcr.dev/core/reconcile"
)

// mappedQueue presents a queue of "outer" requests as a queue of "inner" requests. It implements
// priorityqueue.PriorityQueue so that controller-runtime handlers keep using priorities (they
// type-assert the queue they are given); when the underlying queue is not a priority queue the
// options are mapped onto the plain rate-limiting calls.
type mappedQueue[inner, outer comparable] struct {
	queue workqueue.TypedRateLimitingInterface[outer]
	wrap  func(inner) outer
}

var _ priorityqueue.PriorityQueue[reconcile.Request] = &mappedQueue[reconcile.Request, mcreconcile.Request]{}

func injectCluster(q workqueue.TypedRateLimitingInterface[mcreconcile.Request], name multicluster.ClusterName) *mappedQueue[reconcile.Request, mcreconcile.Request] {
	return &mappedQueue[reconcile.Request, mcreconcile.Request]{queue: q, wrap: func(r reconcile.Request) mcreconcile.Request {
		return mcreconcile.Request{Request: r, ClusterName: name}
	}}
}

func rebindCluster[request mcreconcile.ClusterAware[request]](q workqueue.TypedRateLimitingInterface[request], name multicluster.ClusterName) *mappedQueue[request, request] {
	return &mappedQueue[request, request]{queue: q, wrap: func(r request) request { return r.WithCluster(name) }}
}

func (q *mappedQueue[inner, outer]) Add(item inner) { q.queue.Add(q.wrap(item)) }

func (q *mappedQueue[inner, outer]) AddAfter(item inner, d time.Duration) {
	q.queue.AddAfter(q.wrap(item), d)
}

func (q *mappedQueue[inner, outer]) AddRateLimited(item inner) { q.queue.AddRateLimited(q.wrap(item)) }

func (q *mappedQueue[inner, outer]) Forget(item inner) { q.queue.Forget(q.wrap(item)) }

func (q *mappedQueue[inner, outer]) NumRequeues(item inner) int {
	return q.queue.NumRequeues(q.wrap(item))
}

func (q *mappedQueue[inner, outer]) Done(item inner) { q.queue.Done(q.wrap(item)) }

func (q *mappedQueue[inner, outer]) Len() int { return q.queue.Len() }

func (q *mappedQueue[inner, outer]) ShutDown() { q.queue.ShutDown() }

func (q *mappedQueue[inner, outer]) ShutDownWithDrain() { q.queue.ShutDownWithDrain() }

func (q *mappedQueue[inner, outer]) ShuttingDown() bool { return q.queue.ShuttingDown() }

// Get is not meaningful on a handler's view of the queue: handlers only add. It shuts the caller
// out rather than handing out an item of the wrong type.
func (q *mappedQueue[inner, outer]) Get() (item inner, shutdown bool) {
	var zero inner
	return zero, true
}

// GetWithPriority is not meaningful on a handler's view of the queue, see Get.
func (q *mappedQueue[inner, outer]) GetWithPriority() (item inner, priority int, shutdown bool) {
	var zero inner
	return zero, 0, true
}

func (q *mappedQueue[inner, outer]) AddWithOpts(o priorityqueue.AddOpts, items ...inner) {
	if pq, ok := q.queue.(priorityqueue.PriorityQueue[outer]); ok {
		wrapped := make([]outer, len(items))
		for i, item := range items {
			wrapped[i] = q.wrap(item)
		}
		pq.AddWithOpts(o, wrapped...)
		return
	}
	for _, item := range items {
		switch {
		case o.RateLimited:
			q.queue.AddRateLimited(q.wrap(item))
		case o.After > 0:
			q.queue.AddAfter(q.wrap(item), o.After)
		default:
			q.queue.Add(q.wrap(item))
		}
	}
}
