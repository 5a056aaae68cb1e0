// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	ctrlreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	mcr "mcr.dev/core"
)

const (
	// finalizer holds a consumer's Database until its projection downstream is deleted.
	finalizer = "platform-mesh.examples.mcr.dev/downstream"

	// namespacePrefix starts the name of each consumer's namespace downstream; the rest is the
	// consumer's logical cluster name, unique in kcp and stable for the workspace's life.
	namespacePrefix = "consumer-"

	// labelManagedBy marks what the controller owns downstream; its cache of the downstream
	// cluster holds nothing else.
	labelManagedBy = "app.kubernetes.io/managed-by"
	managedBy      = "mcr-platform-mesh-example"
	// labelConsumerCluster records the consumer's logical cluster on the namespace and the
	// projection, and leads a change downstream back to the consumer's Database.
	labelConsumerCluster = "platform-mesh.examples.mcr.dev/consumer-cluster"
	// annotationDatabase records the name of the consumer's Database on its projection.
	annotationDatabase = "platform-mesh.examples.mcr.dev/database"
)

// snippet:begin platform-mesh-wiring

// newDownstream returns the downstream cluster, where the databases run. Its cache holds only
// the objects the controller manages.
func newDownstream(cfg *rest.Config, scheme *runtime.Scheme) (cluster.Cluster, error) {
	return cluster.New(cfg, func(o *cluster.Options) {
		o.Scheme = scheme
		o.Cache = cache.Options{DefaultLabelSelector: labels.SelectorFromSet(labels.Set{labelManagedBy: managedBy})}
	})
}

// setup adds the Database controller to mgr: it reconciles the Databases of every consumer
// workspace the kcp provider engages, and runs each one downstream.
func setup(mgr mcr.Manager, downstream cluster.Cluster) error {
	// The manager runs the downstream cluster's cache with everything else.
	if err := mgr.Add(downstream); err != nil {
		return fmt.Errorf("adding the downstream cluster: %w", err)
	}
	return mcr.NewControllerManagedBy(mgr).
		Named("databases").
		// The Databases of every consumer: each engaged logical cluster, through the
		// APIExport's virtual workspace.
		For(&Database{}).
		// A projection changed or deleted downstream: reconcile its Database, which puts it back.
		WatchesRawSource(source.TypedKind(downstream.GetCache(), &corev1.ConfigMap{},
			handler.TypedEnqueueRequestsFromMapFunc(databaseOfProjection))).
		Complete(&Reconciler{Manager: mgr, Downstream: downstream.GetClient(), DownstreamReader: downstream.GetAPIReader()})
}

// snippet:end platform-mesh-wiring

// databaseOfProjection maps a projection downstream to the Database it projects.
func databaseOfProjection(_ context.Context, cm *corev1.ConfigMap) []mcr.Request {
	consumer, name := cm.Labels[labelConsumerCluster], cm.Annotations[annotationDatabase]
	if consumer == "" || name == "" {
		return nil
	}
	return []mcr.Request{{
		ClusterName: mcr.ClusterName(consumer),
		Request:     ctrlreconcile.Request{NamespacedName: client.ObjectKey{Name: name}},
	}}
}

// Reconciler runs every consumer's Database in the downstream cluster and reports back.
type Reconciler struct {
	Manager mcr.Manager
	// Downstream writes to the downstream cluster.
	Downstream client.Client
	// DownstreamReader reads the downstream cluster live: a projection written a moment ago
	// may not be in the cache yet, and must not be created twice.
	DownstreamReader client.Reader
}

// snippet:begin platform-mesh-reconcile

// Reconcile brings one consumer's Database to the downstream cluster, or removes it from there
// when the consumer deletes it, and writes the outcome to the Database's status. The request's
// cluster is the consumer's logical cluster; its client writes through the APIExport's virtual
// workspace into the consumer's workspace.
func (r *Reconciler) Reconcile(ctx context.Context, req mcr.Request) (mcr.Result, error) {
	consumer, err := r.Manager.GetCluster(ctx, req.ClusterName)
	if err != nil {
		return mcr.Result{}, err // a consumer that left the fleet ends the request quietly
	}
	c := consumer.GetClient()
	db := &Database{}
	if err := c.Get(ctx, req.NamespacedName, db); err != nil {
		return mcr.Result{}, client.IgnoreNotFound(err)
	}
	key, keyErr := projectionKey(req.ClusterName, db.Name)

	// Deleted by the consumer: delete the projection, then let the Database go.
	if !db.DeletionTimestamp.IsZero() {
		if !controllerutil.ContainsFinalizer(db, finalizer) {
			return mcr.Result{}, nil
		}
		if keyErr == nil { // otherwise nothing was ever projected
			if err := r.deleteProjection(ctx, req.ClusterName, key); err != nil {
				return mcr.Result{}, err // retried; the Database stays until its projection is gone
			}
		}
		controllerutil.RemoveFinalizer(db, finalizer)
		if err := c.Update(ctx, db); err != nil {
			return mcr.Result{}, fmt.Errorf("removing the finalizer: %w", err)
		}
		mcr.LoggerFrom(ctx).Info("Deleted the Database downstream", "downstream", key.String())
		return mcr.Result{}, nil
	}
	if controllerutil.AddFinalizer(db, finalizer) {
		if err := c.Update(ctx, db); err != nil {
			return mcr.Result{}, fmt.Errorf("adding the finalizer: %w", err)
		}
	}

	// Spec down.
	writeErr := keyErr
	if writeErr == nil {
		writeErr = r.writeProjection(ctx, req.ClusterName, db, key)
	}

	// Status up, through the virtual workspace into the consumer's workspace.
	status := DatabaseStatus{Phase: PhaseReady, Downstream: key.String(), ObservedGeneration: db.Generation}
	if writeErr != nil {
		status.Phase, status.Message = PhaseFailed, writeErr.Error()
	}
	if db.Status != status {
		db.Status = status
		if err := c.Status().Update(ctx, db); err != nil {
			return mcr.Result{}, errors.Join(writeErr, fmt.Errorf("writing the status: %w", err))
		}
	}
	return mcr.Result{}, writeErr // an error retries with backoff
}

// snippet:end platform-mesh-reconcile

// projectionKey names the projection of a consumer's Database downstream: the namespace of the
// consumer's logical cluster, and the Database's name, unique in the consumer's workspace. Two
// consumers never share a namespace, so their Databases never collide.
func projectionKey(consumer mcr.ClusterName, database string) (client.ObjectKey, error) {
	key := client.ObjectKey{Namespace: namespacePrefix + string(consumer), Name: database}
	if errs := validation.IsDNS1123Label(key.Namespace); len(errs) > 0 {
		return key, fmt.Errorf("logical cluster %q gives no valid namespace name: %v", consumer, errs)
	}
	return key, nil
}

// projection is the ConfigMap that stands for the running database downstream: in a real
// service, the custom resource of a database operator (a CloudNativePG Cluster, ...) or a
// StatefulSet.
func projection(consumer mcr.ClusterName, db *Database, key client.ObjectKey) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   key.Namespace,
			Name:        key.Name,
			Labels:      map[string]string{labelManagedBy: managedBy, labelConsumerCluster: string(consumer)},
			Annotations: map[string]string{annotationDatabase: db.Name},
		},
		Data: map[string]string{
			"engine":     db.Spec.Engine,
			"version":    db.Spec.Version,
			"storageGiB": strconv.Itoa(int(db.Spec.StorageGiB)),
		},
	}
}

// writeProjection creates or updates the projection of db downstream, and the consumer's
// namespace with it.
func (r *Reconciler) writeProjection(ctx context.Context, consumer mcr.ClusterName, db *Database, key client.ObjectKey) error {
	want := projection(consumer, db, key)
	got := &corev1.ConfigMap{}
	switch err := r.DownstreamReader.Get(ctx, key, got); {
	case apierrors.IsNotFound(err):
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: key.Namespace, Labels: map[string]string{
			labelManagedBy: managedBy, labelConsumerCluster: string(consumer),
		}}}
		if err := r.Downstream.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating namespace %s downstream: %w", key.Namespace, err)
		}
		if err := r.Downstream.Create(ctx, want); err != nil {
			return fmt.Errorf("creating %s downstream: %w", key, err)
		}
		mcr.LoggerFrom(ctx).Info("Created the Database downstream", "downstream", key.String())
		return nil
	case err != nil:
		return fmt.Errorf("reading %s downstream: %w", key, err)
	}
	// Never take over an object someone else put there.
	if got.Labels[labelManagedBy] != managedBy || got.Labels[labelConsumerCluster] != string(consumer) {
		return fmt.Errorf("%s exists downstream and is not this Database's: it lacks the label %s=%s", key, labelConsumerCluster, consumer)
	}
	if maps.Equal(got.Data, want.Data) && got.Annotations[annotationDatabase] == db.Name {
		return nil
	}
	got.Data = want.Data
	if got.Annotations == nil {
		got.Annotations = map[string]string{}
	}
	got.Annotations[annotationDatabase] = db.Name
	if err := r.Downstream.Update(ctx, got); err != nil {
		return fmt.Errorf("updating %s downstream: %w", key, err)
	}
	mcr.LoggerFrom(ctx).Info("Updated the Database downstream", "downstream", key.String())
	return nil
}

// deleteProjection deletes the consumer's projection downstream; one that is gone already, or
// an object there that is not the consumer's, is left alone. The consumer's namespace stays for
// its other Databases.
func (r *Reconciler) deleteProjection(ctx context.Context, consumer mcr.ClusterName, key client.ObjectKey) error {
	cm := &corev1.ConfigMap{}
	switch err := r.DownstreamReader.Get(ctx, key, cm); {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("reading %s downstream: %w", key, err)
	}
	if cm.Labels[labelManagedBy] != managedBy || cm.Labels[labelConsumerCluster] != string(consumer) {
		return nil
	}
	// The precondition keeps a delete from hitting an object that replaced this one meanwhile.
	err := r.Downstream.Delete(ctx, cm, client.Preconditions{UID: &cm.UID})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting %s downstream: %w", key, err)
	}
	return nil
}
