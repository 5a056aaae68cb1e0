// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	mcbuilder "mcr.dev/core/builder"
	"mcr.dev/core/clusters"
	mchandler "mcr.dev/core/handler"
	mcreconcile "mcr.dev/core/reconcile"
	"mcr.dev/core/workqueue"
)

// Owns enqueues the owner in the cluster the owned object lives in, resolving the owner with
// that cluster's scheme and RESTMapper; OnlyMetadata watches work per cluster too.
func TestOwnsAndMetadataWatches(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t, "b")
	p := newTestProvider(clusters.Options[cluster.Cluster]{})
	mgr := startManager(t, p)
	s := newSeen()
	err := mcbuilder.ControllerManagedBy(mgr).Named("owns-"+ns).
		For(&corev1.ConfigMap{}, mcbuilder.WithPredicates()).
		Owns(&corev1.Secret{}).
		Watches(&corev1.ServiceAccount{}, mchandler.EnqueueRequestForObject, mcbuilder.OnlyMetadata).
		Complete(mcreconcile.Func(func(_ context.Context, req mcreconcile.Request) (reconcile.Result, error) {
			if req.Namespace == ns {
				s.add(req)
			}
			return reconcile.Result{}, nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	p.mustAdd(t, "b", fleet.Member("b").Config())

	c := memberClient(t, "b")
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "owner"}}
	if err := c.Create(ctx, owner); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the owner to be reconciled", func() bool { return s.has("b", ns, "owner") })
	controller := true
	owned := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "owned", OwnerReferences: []metav1.OwnerReference{{
		APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID, Controller: &controller,
	}}}}
	// Remove the owner's own record so only the Secret's event can bring it back.
	s.mu.Lock()
	delete(s.reqs, mcreconcile.Request{ClusterName: "b", Request: reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "owner"}}})
	s.mu.Unlock()
	if err := c.Create(ctx, owned); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the owned Secret to enqueue its owner", func() bool { return s.has("b", ns, "owner") })
	if s.has("b", ns, "owned") {
		t.Fatal("Owns enqueued the owned object instead of its owner")
	}

	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "robot"}}
	if err := c.Create(ctx, sa); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the metadata-only watch to deliver", func() bool { return s.has("b", ns, "robot") })
}

// The per-cluster fair queue plugs into a multi-cluster controller through NewQueue.
func TestFairQueueThroughBuilder(t *testing.T) {
	ns := namespace(t, "a", "b")
	p := newTestProvider(clusters.Options[cluster.Cluster]{})
	mgr := startManager(t, p)
	s := newSeen()
	err := mcbuilder.ControllerManagedBy(mgr).Named("fair-" + ns).For(&corev1.ConfigMap{}).
		WithOptions(controller.TypedOptions[mcreconcile.Request]{NewQueue: workqueue.ClusterFairQueue[mcreconcile.Request](workqueue.Options{})}).
		Complete(labeller(mgr, ns, s))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"a", "b"} {
		createConfigMap(t, m, ns, "cm", nil)
		p.mustAdd(t, m, fleet.Member(m).Config())
	}
	for _, m := range []string{"a", "b"} {
		eventually(t, time.Minute, "configmap in "+m+" to be labeled", func() bool { return labelOf(t, m, ns, "cm") == "cluster-"+m })
	}
}
