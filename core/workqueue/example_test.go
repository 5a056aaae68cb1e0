// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package workqueue_test

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/log"
	ctrlreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"mcr.dev/core/multicluster"
	mcreconcile "mcr.dev/core/reconcile"
	"mcr.dev/core/workqueue"
)

// A controller gets a cluster-fair queue through its NewQueue option. The same options work for
// controller.NewTyped with a manager, and for a builder's WithOptions.
func ExampleClusterFairQueue() {
	reconciler := mcreconcile.Func(func(ctx context.Context, req mcreconcile.Request) (mcreconcile.Result, error) {
		log.FromContext(ctx).Info("Reconciling", "cluster", req.ClusterName)
		return mcreconcile.Result{}, nil
	})

	c, err := controller.NewTypedUnmanaged("configmaps", controller.TypedOptions[mcreconcile.Request]{
		Reconciler: reconciler,
		NewQueue:   workqueue.ClusterFairQueue[mcreconcile.Request](workqueue.Options{}),
	})
	if err != nil {
		panic(err)
	}
	_ = c // add watches, then c.Start(ctx), or let the manager start it
}

// A flood of requests from one cluster does not delay the others: clusters take turns, after
// higher priorities.
func ExampleNewClusterFair() {
	q := workqueue.NewClusterFair[mcreconcile.Request]("example", nil, workqueue.Options{})
	defer q.ShutDown()

	request := func(cluster, name string) mcreconcile.Request {
		return mcreconcile.Request{
			Request:     ctrlreconcile.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: name}},
			ClusterName: multicluster.ClusterName(cluster),
		}
	}
	for i := range 100 {
		q.Add(request("noisy", fmt.Sprint("cm-", i)))
	}
	q.Add(request("quiet", "cm-0"))
	q.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(10)}, request("urgent", "cm-0"))

	for range 4 {
		req, priority, _ := q.GetWithPriority()
		fmt.Println(req, "priority", priority)
		q.Done(req)
	}
	fmt.Println("still queued:", q.Len())

	// Output:
	// cluster://urgent/default/cm-0 priority 10
	// cluster://noisy/default/cm-0 priority 0
	// cluster://quiet/default/cm-0 priority 0
	// cluster://noisy/default/cm-1 priority 0
	// still queued: 98
}
