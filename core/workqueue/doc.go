// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package workqueue provides work queues for multi-cluster controllers.
//
// A multi-cluster controller has one queue and one worker pool for the whole fleet: the cluster is
// part of each request. With controller-runtime's queues a cluster that produces many events (an
// initial list of thousands of objects, a noisy operator, a re-sync) fills the queue, and every
// other cluster's requests wait behind that backlog.
//
// NewClusterFair returns a queue that keeps one FIFO sub-queue per cluster and serves the clusters
// in turn, one request per cluster per turn. A request from a quiet cluster therefore waits for at
// most one request of each other busy cluster, however long their backlogs are. Everything else
// behaves like controller-runtime's priority queue (package
// sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue), which it implements:
//
//   - a request is queued at most once; adding it again while it is queued only merges the options
//     (the higher priority and the earlier ready time win);
//   - a request being processed is not handed out again until Done; if it was added meanwhile it is
//     queued again at Done;
//   - higher priorities are served first; clusters take turns within a priority, and requests of
//     one cluster keep their order;
//   - AddAfter and AddRateLimited delay requests; one timer serves all delayed requests of a queue;
//   - after ShutDown, Get returns at once with shutdown set, and no goroutine of the queue is left;
//     ShutDownWithDrain first lets workers finish the ready requests and those in progress.
//
// Len counts the requests ready to be handed out, not delayed ones nor ones waiting for their own
// processing to end. ShutDown may be called more than once.
//
// A controller uses the queue through its NewQueue option; ClusterFairQueue builds that function:
//
//	ctrl, err := controller.NewTyped("pods", mgr, controller.TypedOptions[reconcile.Request]{
//		Reconciler: r,
//		NewQueue:   workqueue.ClusterFairQueue[reconcile.Request](workqueue.Options{}),
//	})
//
// controller-runtime recognizes the queue as a priority queue, so priorities set by event handlers
// (for example low priority for objects of the initial list) are kept.
//
// # Caps and circuit breaker
//
// Fairness bounds how long a quiet cluster waits behind busy ones, not how many workers a
// cluster with slow or failing reconciles occupies. Two opt-in guards do, both per cluster and
// both off by default:
//
//   - Options.MaxInFlightPerCluster caps the requests of one cluster being processed at once. A
//     cluster at its cap is passed over by Get until one of its requests is Done; the others go
//     on.
//   - Options.Breaker parks a cluster whose reconciles keep failing. After FailureThreshold
//     failed reconciles in a row the breaker opens: the cluster's requests are held back, in
//     order, for InitialBackoff. Then it is half open: one request goes through as a probe. A
//     successful probe closes the breaker; a failed one opens it again for twice as long, up to
//     MaxBackoff. Requests handed out before the breaker opened do not count once it has.
//
// Held-back requests stay queued (and keep merging with new adds), but Len does not count them.
// ShutDown and ShutDownWithDrain drop the requests an open breaker holds back, as they drop
// delayed ones.
//
// The queue learns outcomes from what the controller does with a request it processes, so it
// needs no wiring and works under any controller-runtime controller: a request added again with
// RateLimited before its Done is a failure (controller-runtime does that when Reconcile returns an
// error, unless it is terminal, and for the deprecated Result.Requeue); a request Done without it
// is a success (including RequeueAfter and terminal errors, which are not retried). Every
// retried error counts, whether it came from the member's API server or not: a reconciler that
// fails everywhere parks every cluster, which is also what an error storm calls for.
//
// The breaker logs each transition with the cluster under "cluster" (Options.Logger) and reports
// it as mcr_cluster_breaker_state{controller,cluster,state} (one series per state, 1 for the
// current one) and mcr_cluster_breaker_transitions_total{controller,cluster,state}, bounded and
// deleted when the cluster is disengaged as mcr.dev/core/metrics.ClusterSeriesOptions says.
//
// Metrics: the queue reports the standard workqueue metrics (depth, adds, queue latency, work
// duration, unfinished work, longest running processor, retries) under the controller's name, in
// the same series of controller-runtime's metrics registry that its own queues use
// (workqueue_depth{name, controller, priority=""}, workqueue_adds_total{name, controller}, ...), so
// existing dashboards keep working. Options.MetricsProvider takes any other
// k8s.io/client-go/util/workqueue.MetricsProvider instead. It also records, per cluster, the time
// each request waited between becoming due and being handed out, in
// mcr_queue_wait_seconds{controller,cluster}, bounded as mcr.dev/core/metrics.ClusterSeriesOptions
// says.
package workqueue
