// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
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
	// replicaAnnotation is set to the replica that reconciled the ConfigMap: the one that owns
	// its cluster.
	replicaAnnotation = "mcr.dev/marked-by"
)

// setupMarker adds the controller: in every cluster this replica owns it annotates the
// ConfigMaps labeled markLabel=true with the name of their cluster and the replica.
func setupMarker(mgr mcr.Manager, replica string) error {
	labeled := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetLabels()[markLabel] == "true" })
	err := mcr.NewControllerManagedBy(mgr).
		Named("configmap-marker").
		For(&corev1.ConfigMap{}, builder.WithPredicates(labeled)).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: 4,
			// One queue, fair across clusters: a slow member holds at most 2 of the 4 workers,
			// and one whose reconciles keep failing is parked by its circuit breaker.
			NewQueue: workqueue.ClusterFairQueue[mcr.Request](workqueue.Options{
				MaxInFlightPerCluster: 2,
				Breaker:               &workqueue.BreakerOptions{},
			}),
		}).
		Complete(&configMapMarker{mgr: mgr, replica: replica})
	if err != nil {
		return fmt.Errorf("setting up the configmap-marker controller: %w", err)
	}
	return nil
}

// configMapMarker annotates one ConfigMap with the name of its cluster and the replica.
type configMapMarker struct {
	mgr     mcr.Manager
	replica string
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
	if cm.Annotations[markAnnotation] == string(req.ClusterName) && cm.Annotations[replicaAnnotation] == r.replica {
		return mcr.Result{}, nil
	}
	patch := client.MergeFrom(cm.DeepCopy())
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations[markAnnotation] = string(req.ClusterName)
	cm.Annotations[replicaAnnotation] = r.replica
	if err := cl.GetClient().Patch(ctx, cm, patch); err != nil {
		return mcr.Result{}, fmt.Errorf("annotating ConfigMap %s: %w", req.NamespacedName, err)
	}
	// The logger of a reconcile already carries the cluster, namespace and name.
	mcr.LoggerFrom(ctx).Info("Marked ConfigMap with its cluster")
	return mcr.Result{}, nil
}
