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
	"sigs.k8s.io/controller-runtime/pkg/source"

	mcr "mcr.dev/core"
	"mcr.dev/core/ownership"
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

	// downstreamCluster names the downstream cluster on the Databases (the clusters that hold
	// their projections); the manager does not engage it.
	downstreamCluster = mcr.ClusterName("downstream")
)

// databaseKind is the kind of the projections' owners.
var databaseKind = GroupVersion.WithKind("Database").GroupKind()

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
	// Each projection is marked with its Database (consumer's logical cluster, name, UID),
	// deleted with it, and leads a change downstream back to it.
	projections, err := ownership.NewTracker(mgr, ownership.Options{
		Projections: []client.ObjectList{&corev1.ConfigMapList{}}, Finalizer: finalizer,
		ExtraClusters: map[mcr.ClusterName]cluster.Cluster{downstreamCluster: downstream},
	})
	if err != nil {
		return err
	}
	return mcr.NewControllerManagedBy(mgr).
		Named("databases").
		// The Databases of every consumer: each engaged logical cluster, through the
		// APIExport's virtual workspace.
		For(&Database{}).
		// A projection changed or deleted downstream: reconcile its Database, which puts it back.
		WatchesRawSource(source.TypedKind[client.Object](downstream.GetCache(), &corev1.ConfigMap{},
			handler.TypedEnqueueRequestsFromMapFunc(ownership.MapToOwner(databaseKind)))).
		Complete(&Reconciler{Manager: mgr, Projections: projections, Downstream: downstream.GetClient(), DownstreamReader: downstream.GetAPIReader()})
}

// snippet:end platform-mesh-wiring

// Reconciler runs every consumer's Database in the downstream cluster and reports back.
type Reconciler struct {
	Manager mcr.Manager
	// Projections keeps the finalizer on the Databases and deletes their projections.
	Projections *ownership.Tracker
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

	// Deleted by the consumer: delete the projection (found by the Database's UID), then let
	// the Database go; an error retries, and the Database stays until its projection is gone.
	if !db.DeletionTimestamp.IsZero() {
		res, err := r.Projections.Finalize(ctx, req.ClusterName, db)
		if err == nil && !controllerutil.ContainsFinalizer(db, finalizer) {
			mcr.LoggerFrom(ctx).Info("Deleted the Database downstream", "downstream", key.String())
		}
		return res, err
	}
	// The finalizer, and downstream recorded as holding the projection, before it exists.
	if err := r.Projections.Track(ctx, req.ClusterName, db, downstreamCluster); err != nil {
		return mcr.Result{}, err
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
// StatefulSet. It is marked with its Database, owner.
func projection(owner ownership.Owner, db *Database, key client.ObjectKey) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Labels: map[string]string{labelManagedBy: managedBy}},
		Data: map[string]string{
			"engine":     db.Spec.Engine,
			"version":    db.Spec.Version,
			"storageGiB": strconv.Itoa(int(db.Spec.StorageGiB)),
		},
	}
	return cm, ownership.SetOwner(cm, owner)
}

// writeProjection creates or updates the projection of db downstream, and the consumer's
// namespace with it.
func (r *Reconciler) writeProjection(ctx context.Context, consumer mcr.ClusterName, db *Database, key client.ObjectKey) error {
	owner, err := r.Projections.Owner(ctx, consumer, db)
	if err != nil {
		return err
	}
	want, err := projection(owner, db, key)
	if err != nil {
		return err
	}
	got := &corev1.ConfigMap{}
	switch err := r.DownstreamReader.Get(ctx, key, got); {
	case apierrors.IsNotFound(err):
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: key.Namespace, Labels: map[string]string{labelManagedBy: managedBy}}}
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
	// Never take over an object someone else put there, nor a former Database's of that name.
	if !owner.Owns(got) {
		return fmt.Errorf("%s exists downstream and is not this Database's (%s)", key, owner)
	}
	if maps.Equal(got.Data, want.Data) {
		return nil
	}
	got.Data = want.Data
	if err := r.Downstream.Update(ctx, got); err != nil {
		return fmt.Errorf("updating %s downstream: %w", key, err)
	}
	mcr.LoggerFrom(ctx).Info("Updated the Database downstream", "downstream", key.String())
	return nil
}
