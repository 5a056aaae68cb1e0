// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"fmt"
	"maps"
	"slices"

	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
	mcreconcile "mcr.dev/core/reconcile"
)

var _ mcmanager.DebugReporter = &mcController[mcreconcile.Request]{}

// ClusterQueue is implemented by work queues that count the requests waiting for each cluster.
// When a controller's queue does, the fleet debug endpoint (manager.AddFleetDebugHandler) shows
// each cluster's queue depth; otherwise only the controller's whole queue length. The queue must
// also be a controller-runtime priority queue (priorityqueue.PriorityQueue, as mcr's
// cluster-fair queue is): controller-runtime wraps any other queue, which hides the method.
type ClusterQueue interface {
	// ClusterLen returns the number of requests of the cluster in the queue.
	ClusterLen(cluster multicluster.ClusterName) int
}

// ClusterBreaker is implemented by work queues with a circuit breaker per cluster (mcr's
// cluster-fair queue with its breaker on). When a controller's queue does, the fleet debug
// endpoint shows each cluster's breaker state. Like ClusterQueue, it must be a priority queue.
type ClusterBreaker interface {
	// ClusterBreakerState returns the state of the cluster's breaker ("closed", "half_open",
	// "open"), or "" when the queue has no breaker.
	ClusterBreakerState(cluster multicluster.ClusterName) string
}

// DebugState describes the controller for the fleet debug endpoint: whether it runs, its queue
// length, and per engaged cluster the sync state of every source (parked ones with the reason),
// the last reconcile error, and the cluster's queue depth and breaker state when the queue is a
// ClusterQueue and a ClusterBreaker.
func (c *mcController[request]) DebugState() mcmanager.ControllerDebug {
	c.mu.Lock()
	queue := c.queue
	d := mcmanager.ControllerDebug{Name: c.name, Running: queue != nil && !c.stopped, QueueDepth: -1}
	sources := make([]string, len(c.sources))
	for i, src := range c.sources {
		sources[i] = fmt.Sprint(src)
	}
	for _, name := range slices.Sorted(maps.Keys(c.clusters)) {
		e := c.clusters[name]
		if e.ctx.Err() != nil {
			continue // on its way out
		}
		cc := mcmanager.ControllerCluster{Name: name, Synced: true, LastError: e.lastError}
		if !e.lastErrorAt.IsZero() {
			at := e.lastErrorAt
			cc.LastErrorTime = &at
		}
		for i, src := range sources {
			parked, isParked := e.parked[i]
			synced := e.synced[i] || isParked
			cc.Synced = cc.Synced && synced
			cc.Sources = append(cc.Sources, mcmanager.SourceDebug{Source: src, Synced: synced, Parked: parked})
		}
		d.Clusters = append(d.Clusters, cc)
	}
	c.mu.Unlock()

	// The queue has a lock of its own: not taken under the controller's.
	if queue != nil {
		d.QueueDepth = queue.Len()
		if perCluster, ok := any(queue).(ClusterQueue); ok {
			for i := range d.Clusters {
				n := perCluster.ClusterLen(d.Clusters[i].Name)
				d.Clusters[i].QueueDepth = &n
			}
		}
		if breaker, ok := any(queue).(ClusterBreaker); ok {
			for i := range d.Clusters {
				d.Clusters[i].Breaker = breaker.ClusterBreakerState(d.Clusters[i].Name)
			}
		}
	}
	return d
}
