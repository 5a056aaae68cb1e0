// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package workqueue_test

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/controller"

	mcreconcile "mcr.dev/core/reconcile"
	"mcr.dev/core/workqueue"
)

// Per-cluster caps and the circuit breaker are options of the queue; zero fields of
// BreakerOptions take their defaults.
func ExampleBreakerOptions() {
	reconciler := mcreconcile.Func(func(ctx context.Context, req mcreconcile.Request) (mcreconcile.Result, error) {
		return mcreconcile.Result{}, nil
	})

	c, err := controller.NewTypedUnmanaged("configmaps", controller.TypedOptions[mcreconcile.Request]{
		Reconciler:              reconciler,
		MaxConcurrentReconciles: 8,
		NewQueue: workqueue.ClusterFairQueue[mcreconcile.Request](workqueue.Options{
			// No cluster occupies more than 2 of the 8 workers.
			MaxInFlightPerCluster: 2,
			// 10 failed reconciles of a cluster in a row park it for 5s, then 10s, 20s, ...
			// up to 5m while its probes fail.
			Breaker: &workqueue.BreakerOptions{},
		}),
	})
	if err != nil {
		panic(err)
	}
	_ = c // add watches, then c.Start(ctx), or let the manager start it
}
