// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package ownership

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
)

// Annotations a Tracker writes on owners.
const (
	// AnnotationClusters records, as a JSON object keyed by cluster name, the clusters that
	// hold (or may hold) the owner's projections, and since when each one is not engaged.
	AnnotationClusters = "ownership.mcr.dev/clusters"
	// AnnotationAbandoned lists, as a JSON array, the clusters Finalize gave up on by
	// Options.GiveUpAfter.
	AnnotationAbandoned = "ownership.mcr.dev/abandoned"
)

// Reasons of the Events a Tracker records on owners.
const (
	// ReasonAbandoned: a cluster was given up by Options.GiveUpAfter (Warning).
	ReasonAbandoned = "ProjectionsAbandoned"
	// ReasonWaiting: a recorded cluster is not engaged; the finalizer waits for it (Normal).
	ReasonWaiting = "WaitingForCluster"
)

// ErrOwnerDeleting is returned by Track for an owner that is being deleted: its projections
// are on their way out, and no cluster may be added.
var ErrOwnerDeleting = errors.New("owner is being deleted")

// Tracker keeps the finalizer and the record of clusters on owners, and cleans up their
// projections when they are deleted. One Tracker serves every owner of a controller; it is
// safe for concurrent use.
type Tracker struct {
	mgr  manager.Manager
	opts Options
}

// NewTracker returns a Tracker for the owners of mgr's controllers, with opts' defaults applied.
func NewTracker(mgr manager.Manager, opts Options) (*Tracker, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Tracker{mgr: mgr, opts: opts}, nil
}

// clusterRecord is what an owner's AnnotationClusters says about one cluster.
type clusterRecord struct {
	// MissingSince is when Finalize first found the cluster not engaged.
	MissingSince *metav1.Time `json:"missingSince,omitempty"`
}

// Owner returns the reference to owner of cluster, for SetOwner; the kind comes from the
// scheme of the owner's cluster.
func (t *Tracker) Owner(ctx context.Context, cluster multicluster.ClusterName, owner client.Object) (Owner, error) {
	cl, err := t.mgr.GetCluster(ctx, cluster)
	if err != nil {
		return Owner{}, fmt.Errorf("ownership: owner's cluster %q: %w", cluster, err)
	}
	return OwnerOf(cluster, owner, cl.GetScheme())
}

// Track adds the finalizer to owner, an object of cluster ownerCluster, and records clusters as
// holders of its projections; it writes owner when that changed anything. Call it before
// writing projections to those clusters, so that none is forgotten when the owner is deleted.
// It returns ErrOwnerDeleting for an owner that is being deleted: call Finalize then.
func (t *Tracker) Track(ctx context.Context, ownerCluster multicluster.ClusterName, owner client.Object, clusters ...multicluster.ClusterName) error {
	if !owner.GetDeletionTimestamp().IsZero() {
		return fmt.Errorf("ownership: %s: %w", client.ObjectKeyFromObject(owner), ErrOwnerDeleting)
	}
	record, err := readClusters(owner)
	if err != nil {
		return err
	}
	changed := controllerutil.AddFinalizer(owner, t.opts.Finalizer)
	for _, name := range clusters {
		if _, ok := record[name]; !ok {
			record[name] = clusterRecord{}
			changed = true
		}
	}
	if !changed {
		return nil
	}
	if err := writeClusters(owner, record); err != nil {
		return err
	}
	return t.updateOwner(ctx, ownerCluster, owner)
}

// Finalize cleans up after owner, an object of cluster ownerCluster, when it is being deleted
// and holds the Tracker's finalizer; otherwise it does nothing. It deletes the owner's
// projections (of the kinds in Options.Projections, selected by the owner's UID) in every
// engaged cluster, and removes the finalizer once every cluster recorded on the owner is
// clean. A recorded cluster that is not engaged keeps the finalizer (the result asks to be
// called again after Options.RecheckInterval) until it is engaged again, or until
// Options.GiveUpAfter gives it up. Errors name their cluster; the finalizer stays.
//
// Return its result and error from Reconcile.
func (t *Tracker) Finalize(ctx context.Context, ownerCluster multicluster.ClusterName, owner client.Object) (reconcile.Result, error) {
	if owner.GetDeletionTimestamp().IsZero() || !controllerutil.ContainsFinalizer(owner, t.opts.Finalizer) {
		return reconcile.Result{}, nil
	}
	logger := log.FromContext(ctx)
	ref, err := t.Owner(ctx, ownerCluster, owner)
	if err != nil {
		return reconcile.Result{}, err
	}
	record, err := readClusters(owner)
	if err != nil {
		return reconcile.Result{}, err // never forget a cluster silently: the record must be repaired
	}

	results := t.forEachCluster(ctx, t.clusters(), func(ctx context.Context, _ multicluster.ClusterName, cl cluster.Cluster) error {
		return t.deleteProjections(ctx, cl, ref)
	})

	var (
		errs     []error
		changed  bool
		wait     time.Duration
		now      = time.Now()
		given    []multicluster.ClusterName
		recorder = t.events(ownerCluster)
	)
	for _, name := range slices.Sorted(maps.Keys(results)) {
		if err := results[name]; err != nil {
			errs = append(errs, fmt.Errorf("cluster %q: %w", name, err))
			if rec, ok := record[name]; ok && rec.MissingSince != nil {
				record[name] = clusterRecord{} // engaged again: not missing, only failing
				changed = true
			}
			continue
		}
		if _, ok := record[name]; ok {
			delete(record, name)
			changed = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(record)) {
		if _, engagedNow := results[name]; engagedNow {
			continue
		}
		rec := record[name]
		if rec.MissingSince == nil {
			record[name] = clusterRecord{MissingSince: &metav1.Time{Time: now}}
			changed = true
			logger.Info("A cluster that holds projections is not engaged; the finalizer waits for it", "cluster", name)
			recorder.event(ctx, owner, corev1.EventTypeNormal, ReasonWaiting, fmt.Sprintf("cluster %q holds projections and is not engaged; waiting for it", name))
			wait = t.nextCheck(wait, t.opts.GiveUpAfter)
			continue
		}
		missing := now.Sub(rec.MissingSince.Time)
		if t.opts.GiveUpAfter > 0 && missing >= t.opts.GiveUpAfter {
			delete(record, name)
			given = append(given, name)
			changed = true
			continue
		}
		wait = t.nextCheck(wait, t.opts.GiveUpAfter-missing)
	}
	if len(given) > 0 {
		if err := addAbandoned(owner, given); err != nil {
			return reconcile.Result{}, err
		}
		for _, name := range given {
			abandonedClusters.Inc()
			logger.Info("Gave up on a cluster that holds projections", "cluster", name, "giveUpAfter", t.opts.GiveUpAfter)
			recorder.event(ctx, owner, corev1.EventTypeWarning, ReasonAbandoned, fmt.Sprintf(
				"cluster %q was not engaged for %s (GiveUpAfter); its projections are left to the orphan sweep", name, t.opts.GiveUpAfter))
		}
	}
	if len(errs) == 0 && len(record) == 0 {
		controllerutil.RemoveFinalizer(owner, t.opts.Finalizer)
		changed = true
	}
	if changed {
		if err := writeClusters(owner, record); err != nil {
			return reconcile.Result{}, err
		}
		if err := t.updateOwner(ctx, ownerCluster, owner); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return reconcile.Result{}, fmt.Errorf("ownership: cleaning up after %s: %w", ref, errors.Join(errs...))
	}
	return reconcile.Result{RequeueAfter: wait}, nil
}

// nextCheck is the sooner of wait (zero: none yet), the recheck interval and untilGiveUp
// (ignored when not positive).
func (t *Tracker) nextCheck(wait, untilGiveUp time.Duration) time.Duration {
	next := t.opts.RecheckInterval
	if untilGiveUp > 0 && untilGiveUp < next {
		next = untilGiveUp
	}
	if wait > 0 && wait < next {
		return wait
	}
	return next
}

// deleteProjections deletes every projection of owner in cl. Objects on their way out already
// are left to their own finalizers.
func (t *Tracker) deleteProjections(ctx context.Context, cl cluster.Cluster, owner Owner) error {
	var errs []error
	for _, proto := range t.opts.Projections {
		items, err := listProjections(ctx, cl, proto, owner.Selector())
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, obj := range items {
			if !obj.GetDeletionTimestamp().IsZero() {
				continue
			}
			uid := obj.GetUID()
			err := cl.GetClient().Delete(ctx, obj, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationBackground))
			if err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("deleting %T %s: %w", obj, client.ObjectKeyFromObject(obj), err))
			}
		}
	}
	return errors.Join(errs...)
}

// listProjections lists the objects of proto's kind in cl that match selector, live from the
// API server. A cluster that does not serve the kind has none.
func listProjections(ctx context.Context, cl cluster.Cluster, proto client.ObjectList, selector client.ListOption) ([]client.Object, error) {
	list, ok := proto.DeepCopyObject().(client.ObjectList)
	if !ok {
		return nil, fmt.Errorf("ownership: %T does not copy to a list", proto)
	}
	if err := cl.GetAPIReader().List(ctx, list, selector); err != nil {
		if meta.IsNoMatchError(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("listing %T: %w", proto, err)
	}
	raw, err := meta.ExtractList(list)
	if err != nil {
		return nil, fmt.Errorf("reading %T: %w", proto, err)
	}
	items := make([]client.Object, 0, len(raw))
	for _, r := range raw {
		if obj, ok := r.(client.Object); ok {
			items = append(items, obj)
		}
	}
	return items, nil
}

// clusters returns the clusters that may hold projections: the engaged ones and the extra ones.
func (t *Tracker) clusters() []multicluster.ClusterName {
	return append(t.mgr.EngagedClusters(), slices.Collect(maps.Keys(t.opts.ExtraClusters))...)
}

// getCluster returns an extra cluster, or else the manager's cluster of that name.
func (t *Tracker) getCluster(ctx context.Context, name multicluster.ClusterName) (cluster.Cluster, error) {
	if cl, ok := t.opts.ExtraClusters[name]; ok {
		return cl, nil
	}
	return t.mgr.GetCluster(ctx, name)
}

// forEachCluster runs fn for every named cluster, at most MaxConcurrentClusters at once, each
// bounded by ClusterTimeout, and returns the outcome per cluster.
func (t *Tracker) forEachCluster(ctx context.Context, names []multicluster.ClusterName, fn func(context.Context, multicluster.ClusterName, cluster.Cluster) error) map[multicluster.ClusterName]error {
	var (
		mu      sync.Mutex
		wg      sync.WaitGroup
		slots   = make(chan struct{}, t.opts.MaxConcurrentClusters)
		results = make(map[multicluster.ClusterName]error, len(names))
	)
	for _, name := range names {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			ctx, cancel := context.WithTimeout(ctx, t.opts.ClusterTimeout)
			defer cancel()
			cl, err := t.getCluster(ctx, name)
			if err == nil {
				err = fn(ctx, name, cl)
			}
			mu.Lock()
			results[name] = err
			mu.Unlock()
		})
	}
	wg.Wait()
	return results
}

// updateOwner writes owner to its cluster.
func (t *Tracker) updateOwner(ctx context.Context, ownerCluster multicluster.ClusterName, owner client.Object) error {
	cl, err := t.mgr.GetCluster(ctx, ownerCluster)
	if err != nil {
		return fmt.Errorf("ownership: owner's cluster %q: %w", ownerCluster, err)
	}
	if err := cl.GetClient().Update(ctx, owner); err != nil {
		return fmt.Errorf("ownership: updating owner %s: %w", client.ObjectKeyFromObject(owner), err)
	}
	return nil
}

func readClusters(owner client.Object) (map[multicluster.ClusterName]clusterRecord, error) {
	record := map[multicluster.ClusterName]clusterRecord{}
	if raw, ok := owner.GetAnnotations()[AnnotationClusters]; ok {
		if err := json.Unmarshal([]byte(raw), &record); err != nil {
			return nil, fmt.Errorf("ownership: annotation %s of %s: %w", AnnotationClusters, client.ObjectKeyFromObject(owner), err)
		}
	}
	return record, nil
}

func writeClusters(owner client.Object, record map[multicluster.ClusterName]clusterRecord) error {
	raw, err := json.Marshal(record)
	if err != nil {
		return fmt.Errorf("ownership: %w", err)
	}
	setAnnotation(owner, AnnotationClusters, string(raw))
	return nil
}

func addAbandoned(owner client.Object, names []multicluster.ClusterName) error {
	var all []multicluster.ClusterName
	if raw, ok := owner.GetAnnotations()[AnnotationAbandoned]; ok {
		_ = json.Unmarshal([]byte(raw), &all) // a damaged list is replaced: it only reports
	}
	all = append(all, names...)
	slices.Sort(all)
	raw, err := json.Marshal(slices.Compact(all))
	if err != nil {
		return fmt.Errorf("ownership: %w", err)
	}
	setAnnotation(owner, AnnotationAbandoned, string(raw))
	return nil
}

func setAnnotation(obj client.Object, key, value string) {
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[key] = value
	obj.SetAnnotations(annotations)
}
