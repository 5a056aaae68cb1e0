// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package workqueue_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	kworkqueue "k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	ctrlreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"mcr.dev/core/multicluster"
	mcreconcile "mcr.dev/core/reconcile"
	"mcr.dev/core/workqueue"
)

// TestControllerServesClustersFairly runs a controller-runtime controller on the queue: the
// controller must see a priority queue (priorities survive) and reconcile clusters in turn.
func TestControllerServesClustersFairly(t *testing.T) {
	request := func(cluster string, i int) mcreconcile.Request {
		return mcreconcile.Request{
			Request:     ctrlreconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: fmt.Sprint(i)}},
			ClusterName: multicluster.ClusterName(cluster),
		}
	}
	const flood = 50
	urgent, quiet := request("urgent", 0), request("quiet", 0)

	var (
		mu    sync.Mutex
		order []mcreconcile.Request
	)
	allDone := make(chan struct{})
	reconciler := mcreconcile.Func(func(_ context.Context, req mcreconcile.Request) (mcreconcile.Result, error) {
		mu.Lock()
		defer mu.Unlock()
		order = append(order, req)
		if len(order) == flood+2 {
			close(allDone)
		}
		return mcreconcile.Result{}, nil
	})

	c, err := controller.NewTypedUnmanaged("fair-queue-test", controller.TypedOptions[mcreconcile.Request]{
		Reconciler:              reconciler,
		MaxConcurrentReconciles: 1,
		SkipNameValidation:      ptr.To(true),
		NewQueue:                workqueue.ClusterFairQueue[mcreconcile.Request](workqueue.Options{}),
	})
	if err != nil {
		t.Fatal(err)
	}
	// Sources start, synchronously, before the workers: every request is queued before the
	// first Get, so the order is deterministic.
	err = c.Watch(source.TypedFunc[mcreconcile.Request](func(_ context.Context, q kworkqueue.TypedRateLimitingInterface[mcreconcile.Request]) error {
		pq, ok := q.(priorityqueue.PriorityQueue[mcreconcile.Request])
		if !ok {
			return fmt.Errorf("controller handed the source a %T, not a priority queue", q)
		}
		for i := range flood {
			pq.Add(request("noisy", i))
		}
		pq.Add(quiet)
		pq.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(10)}, urgent)
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	started := make(chan error, 1)
	go func() { started <- c.Start(ctx) }()
	select {
	case <-allDone:
	case err := <-started:
		t.Fatalf("controller stopped early: %v", err)
	}
	cancel()
	if err := <-started; err != nil {
		t.Fatalf("controller: %v", err)
	}

	mu.Lock()
	defer mu.Unlock()
	if order[0] != urgent {
		t.Fatalf("first reconcile = %v, want the high-priority %v", order[0], urgent)
	}
	if order[1] != quiet && order[2] != quiet {
		t.Fatalf("reconciles 2 and 3 = %v, %v; want the quiet cluster's request among them", order[1], order[2])
	}
}
