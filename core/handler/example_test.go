// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package handler_test

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	mchandler "mcr.dev/core/handler"
	"mcr.dev/core/multicluster"
	mcreconcile "mcr.dev/core/reconcile"
)

// A single-cluster handler is lifted: the controller builds one handler per engaged cluster, and
// every request it enqueues names the cluster the event came from.
func ExampleLift() {
	perCluster := mchandler.Lift(&handler.EnqueueRequestForObject{})

	queue := newQueue()
	defer queue.ShutDown()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "prices"}}
	// The controller does this for every cluster it engages (the cluster object is not needed
	// by this handler).
	perCluster("eu-west", nil).Create(context.Background(), event.CreateEvent{Object: cm}, queue)
	perCluster("us-east", nil).Create(context.Background(), event.CreateEvent{Object: cm}, queue)

	printQueue(queue)
	// Output:
	// cluster://eu-west/shop/prices
	// cluster://us-east/shop/prices
}

// A cluster map function chooses the cluster of each request: here a change in any member
// enqueues the object of the same name in the local (host) cluster, and in the member itself.
func ExampleEnqueueRequestsFromClusterMapFunc() {
	perCluster := mchandler.EnqueueRequestsFromClusterMapFunc(
		func(_ context.Context, source multicluster.ClusterName, obj client.Object) []mcreconcile.Request {
			var host, member mcreconcile.Request
			host.Namespace, host.Name = obj.GetNamespace(), obj.GetName() // ClusterName "": the local cluster
			member = host.WithCluster(source)
			return []mcreconcile.Request{host, member}
		})

	queue := newQueue()
	defer queue.ShutDown()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "prices"}}
	perCluster("eu-west", nil).Update(context.Background(), event.UpdateEvent{ObjectOld: cm, ObjectNew: cm}, queue)

	printQueue(queue)
	// Output:
	// cluster://eu-west/shop/prices
	// shop/prices
}

func newQueue() workqueue.TypedRateLimitingInterface[mcreconcile.Request] {
	return workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[mcreconcile.Request]())
}

// printQueue prints the queued requests in a stable order.
func printQueue(queue workqueue.TypedRateLimitingInterface[mcreconcile.Request]) {
	var lines []string
	for queue.Len() > 0 {
		req, _ := queue.Get()
		lines = append(lines, req.String())
		queue.Done(req)
	}
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
}
