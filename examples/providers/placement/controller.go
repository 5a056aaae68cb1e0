// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	mcr "mcr.dev/core"
	"mcr.dev/core/builder"
	"mcr.dev/core/controller"
	"mcr.dev/core/workqueue"
)

const (
	// markLabel selects the ConfigMaps the controller marks: only those with the value "true".
	markLabel = "mcr.dev/example"
	// markAnnotation is set to the name of the cluster the ConfigMap was reconciled in.
	markAnnotation = "mcr.dev/reconciled-in"
)

// setupMarker adds the controller: in every cluster of the fleet it annotates the ConfigMaps
// labeled markLabel=true with the name of their cluster, an effect visible in every member.
func setupMarker(mgr mcr.Manager) error {
	labeled := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetLabels()[markLabel] == "true" })
	err := mcr.NewControllerManagedBy(mgr).
		Named("configmap-marker").
		For(&corev1.ConfigMap{}, builder.WithPredicates(labeled)).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: 4,
			// With -leader-elect, a standby replica engages and syncs every member before it
			// leads, so a failover costs only the Lease.
			EnableWarmup: ptr.To(true),
			// One queue, fair across clusters: a slow member holds at most 2 of the 4 workers,
			// and one whose reconciles keep failing is parked by its circuit breaker.
			NewQueue: workqueue.ClusterFairQueue[mcr.Request](workqueue.Options{
				MaxInFlightPerCluster: 2,
				Breaker:               &workqueue.BreakerOptions{},
			}),
		}).
		Complete(&configMapMarker{mgr: mgr})
	if err != nil {
		return fmt.Errorf("setting up the configmap-marker controller: %w", err)
	}
	return nil
}

// configMapMarker annotates one ConfigMap with the name of its cluster.
type configMapMarker struct {
	mgr mcr.Manager
}

func (r *configMapMarker) Reconcile(ctx context.Context, req mcr.Request) (mcr.Result, error) {
	cl, err := r.mgr.GetCluster(ctx, req.ClusterName)
	if err != nil {
		return mcr.Result{}, err
	}
	cm := &corev1.ConfigMap{}
	if err := cl.GetClient().Get(ctx, req.NamespacedName, cm); err != nil {
		return mcr.Result{}, client.IgnoreNotFound(err)
	}
	if cm.Annotations[markAnnotation] == string(req.ClusterName) {
		return mcr.Result{}, nil
	}
	patch := client.MergeFrom(cm.DeepCopy())
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations[markAnnotation] = string(req.ClusterName)
	if err := cl.GetClient().Patch(ctx, cm, patch); err != nil {
		return mcr.Result{}, fmt.Errorf("annotating ConfigMap %s: %w", req.NamespacedName, err)
	}
	// The logger of a reconcile already carries the cluster, namespace and name.
	mcr.LoggerFrom(ctx).Info("Marked ConfigMap with its cluster")
	return mcr.Result{}, nil
}
