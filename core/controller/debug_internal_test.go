// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mchandler "mcr.dev/core/handler"
	"mcr.dev/core/multicluster"
	mcreconcile "mcr.dev/core/reconcile"
	mcsource "mcr.dev/core/source"
)

// perClusterQueue is a real queue that also reports a depth and a breaker state per cluster,
// as a cluster-fair queue can.
type perClusterQueue struct {
	workqueue.TypedRateLimitingInterface[mcreconcile.Request]
	depth   map[multicluster.ClusterName]int
	breaker map[multicluster.ClusterName]string
}

func (q *perClusterQueue) ClusterLen(name multicluster.ClusterName) int { return q.depth[name] }

func (q *perClusterQueue) ClusterBreakerState(name multicluster.ClusterName) string {
	return q.breaker[name]
}

// TestDebugStateShowsClusterQueueDepth checks that DebugState reads the per-cluster depth and
// breaker state of a queue that is a ClusterQueue and a ClusterBreaker, and the sync state of
// each source per cluster.
func TestDebugStateShowsClusterQueueDepth(t *testing.T) {
	q := &perClusterQueue{
		TypedRateLimitingInterface: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[mcreconcile.Request]()),
		depth:                      map[multicluster.ClusterName]int{"a": 4, "b": 1},
		breaker:                    map[multicluster.ClusterName]string{"a": "closed", "b": "open"},
	}
	defer q.ShutDown()
	q.Add(mcreconcile.Request{ClusterName: "a"})
	c := &mcController[mcreconcile.Request]{
		name:     "debug",
		clusters: map[multicluster.ClusterName]*engagement{},
		queue:    q,
		sources: []mcsource.TypedSource[client.Object, mcreconcile.Request]{
			mcsource.Kind(&corev1.ConfigMap{}, mchandler.TypedEnqueueRequestForObject[*corev1.ConfigMap]()),
			mcsource.Kind(&corev1.Secret{}, mchandler.TypedEnqueueRequestForObject[*corev1.Secret]()),
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for name, synced := range map[multicluster.ClusterName]map[int]bool{"a": {0: true, 1: true}, "b": {0: true}} {
		c.clusters[name] = &engagement{name: name, ctx: ctx, cancel: cancel, synced: synced}
	}

	d := c.DebugState()
	if d.Name != "debug" || !d.Running || d.QueueDepth != 1 || len(d.Clusters) != 2 {
		t.Fatalf("DebugState = %+v, want debug running with queue 1 and two clusters", d)
	}
	for i, want := range []struct {
		name    multicluster.ClusterName
		synced  bool
		depth   int
		breaker string
	}{{"a", true, 4, "closed"}, {"b", false, 1, "open"}} {
		cc := d.Clusters[i]
		if cc.Name != want.name || cc.Synced != want.synced || cc.QueueDepth == nil || *cc.QueueDepth != want.depth || cc.Breaker != want.breaker {
			t.Errorf("cluster %d = %+v (depth %v), want %+v", i, cc, cc.QueueDepth, want)
		}
	}
	if s := d.Clusters[1].Sources; len(s) != 2 || !s[0].Synced || s[1].Synced || s[1].Source != "kind source: *v1.Secret" {
		t.Errorf("sources of b = %+v, want ConfigMaps synced and Secrets not", s)
	}
}
