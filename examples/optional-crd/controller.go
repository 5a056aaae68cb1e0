// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	mcr "mcr.dev/core"
	"mcr.dev/core/builder"
	"mcr.dev/core/clusters"
	mccontroller "mcr.dev/core/controller"
	mchandler "mcr.dev/core/handler"
)

const (
	// TargetLabel marks the ConfigMaps that may be backed up: those with the value "true".
	TargetLabel = "examples.mcr.dev/backup"
	// BackupsAnnotation is set on every target to the number of Backups that name it, found
	// through the field index: "0" in members without the CRD.
	BackupsAnnotation = "examples.mcr.dev/backups"
	// targetField indexes Backups by spec.target.
	targetField = "spec.target"
)

// setup adds the backup controller and its field index to mgr. Its requests are targets: a
// labeled ConfigMap's own events, and a Backup's events mapped to the ConfigMap it names.
func setup(ctx context.Context, mgr mcr.Manager, parkedRetryMax time.Duration) error {
	// snippet:begin optional-crd-wiring
	// In a member without the CRD the index is parked, not an error: the member is engaged
	// and served all the same.
	if err := mgr.GetFieldIndexer().IndexField(ctx, &Backup{}, targetField, func(o client.Object) []string {
		return []string{o.(*Backup).Spec.Target}
	}); err != nil {
		return fmt.Errorf("indexing Backups by %s: %w", targetField, err)
	}
	labeled := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetLabels()[TargetLabel] == "true" })
	// Backup events become requests for the ConfigMap they name.
	toTarget := mchandler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: o.(*Backup).Spec.Target}}}
	})
	err := mcr.NewControllerManagedBy(mgr).
		Named("backup").
		For(&corev1.ConfigMap{}, builder.WithPredicates(labeled)).
		// Parked in every member that does not serve Backups, started once it does.
		Watches(&Backup{}, toTarget).
		// Bounds how late a member that gets the CRD is watched (default 30 s).
		WithMultiClusterOptions(mccontroller.WithParkedRetryMax(parkedRetryMax)).
		Complete(&reconciler{mgr: mgr})
	if err != nil {
		return fmt.Errorf("setting up the backup controller: %w", err)
	}
	// snippet:end optional-crd-wiring
	return nil
}

// reconciler reconciles one target ConfigMap in one member: the status of the Backups that
// name it, and its BackupsAnnotation.
type reconciler struct{ mgr mcr.Manager }

func (r *reconciler) Reconcile(ctx context.Context, req mcr.Request) (mcr.Result, error) {
	cl, err := r.mgr.GetCluster(ctx, req.ClusterName)
	if err != nil {
		return mcr.Result{}, err
	}
	c := cl.GetClient()
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, req.NamespacedName, cm); err != nil && !apierrors.IsNotFound(err) {
		return mcr.Result{}, fmt.Errorf("reading ConfigMap %s: %w", req.NamespacedName, err)
	}
	isTarget := cm.Labels[TargetLabel] == "true"

	// snippet:begin optional-crd-read
	backups := &BackupList{}
	err = c.List(ctx, backups, client.InNamespace(req.Namespace), client.MatchingFields{targetField: req.Name})
	if _, notServed := clusters.NotServed(err); notServed {
		// A member without the add-on has no Backups; its targets are still reconciled.
		backups.Items = nil
	} else if err != nil {
		return mcr.Result{}, fmt.Errorf("listing the Backups of %s: %w", req.NamespacedName, err)
	}
	// snippet:end optional-crd-read

	want := BackupStatus{Phase: PhaseNoTarget, Cluster: string(req.ClusterName)}
	if isTarget {
		want.Phase = PhaseScheduled
	}
	for i := range backups.Items {
		b := &backups.Items[i]
		if b.Status == want {
			continue
		}
		b.Status = want
		if err := c.Status().Update(ctx, b); err != nil {
			return mcr.Result{}, fmt.Errorf("updating the status of Backup %s/%s: %w", b.Namespace, b.Name, err)
		}
		mcr.LoggerFrom(ctx).Info("Backup reconciled", "backup", b.Name, "phase", want.Phase)
	}

	count := strconv.Itoa(len(backups.Items))
	if !isTarget || cm.Annotations[BackupsAnnotation] == count {
		return mcr.Result{}, nil
	}
	patch := client.MergeFrom(cm.DeepCopy())
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations[BackupsAnnotation] = count
	if err := c.Patch(ctx, cm, patch); err != nil {
		return mcr.Result{}, fmt.Errorf("annotating ConfigMap %s: %w", req.NamespacedName, err)
	}
	mcr.LoggerFrom(ctx).Info("Target annotated", "backups", count)
	return mcr.Result{}, nil
}
