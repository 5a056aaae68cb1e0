// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	ctrlreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	mcr "mcr.dev/core"
	"mcr.dev/core/builder"
	"mcr.dev/core/fleetstatus"
	"mcr.dev/core/ownership"
)

const (
	// finalizer holds a FleetConfigMap in the host until its copies in the members are deleted.
	finalizer = "examples.mcr.dev/fleet-copies"
	// memberTimeout bounds the work on one member in one reconcile: an unreachable member is
	// reported in the status and retried, and never holds up the others.
	memberTimeout = 10 * time.Second
	// retryAfter is when a FleetConfigMap with members out of sync is reconciled again.
	retryAfter = 10 * time.Second
)

// fleetConfigMapKind is the kind of the copies' owners.
var fleetConfigMapKind = GroupVersion.WithKind("FleetConfigMap").GroupKind()

// snippet:begin aware-wiring

// setup adds the FleetConfigMap controller to mgr. A member that holds copies and leaves the
// fleet holds up the deletion of their FleetConfigMap for giveUpAfter at most (0: until it is
// back); copies left behind are deleted by the orphan sweep once it is back.
func setup(mgr mcr.Manager, giveUpAfter time.Duration) error {
	// Joining and leaving the fleet changes what a FleetConfigMap must do, although nothing
	// changed in the host: membership turns into events for the controller.
	membership := &membershipEvents{events: make(chan event.GenericEvent, 1)}
	if err := mgr.Add(membership); err != nil {
		return err
	}
	host := mgr.GetLocalManager().GetClient()
	reconcileAll := handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []mcr.Request {
		var list FleetConfigMapList
		if err := host.List(ctx, &list); err != nil {
			mgr.GetLogger().Error(err, "Cannot list FleetConfigMaps after a fleet change")
			return nil
		}
		reqs := make([]mcr.Request, 0, len(list.Items))
		for _, f := range list.Items {
			reqs = append(reqs, hostRequest(f.Namespace, f.Name))
		}
		return reqs
	})
	// The copies are marked with their FleetConfigMap, deleted with it in every member, and
	// swept when it is gone.
	copies, err := ownership.NewTracker(mgr, ownership.Options{
		Projections: []client.ObjectList{&corev1.ConfigMapList{}}, Finalizer: finalizer,
		ClusterTimeout: memberTimeout, GiveUpAfter: giveUpAfter,
	})
	if err != nil {
		return err
	}
	if err := mgr.Add(copies.Sweeper(fleetConfigMapKind)); err != nil {
		return err
	}

	return mcr.NewControllerManagedBy(mgr).
		Named("fleetconfigmap").
		// The source objects live in the host only (the members do not even have the CRD).
		For(&FleetConfigMap{}, builder.WithEngageWithLocalCluster(true), builder.WithEngageWithProviderClusters(false)).
		// A copy changed or deleted in a member: reconcile its source in the host, which puts
		// the copy back.
		Watches(&corev1.ConfigMap{}, ownership.EnqueueOwner(fleetConfigMapKind), builder.WithEngageWithLocalCluster(false)).
		WatchesRawSource(source.TypedChannel(membership.events, reconcileAll)).
		Complete(&Reconciler{
			Manager: mgr,
			Copies:  copies,
			// One aggregator for every FleetConfigMap: it writes a status only when it changed,
			// at most once a second per object, and reads around the cache after a conflict.
			Status: fleetstatus.New(host, fleetstatus.Options{APIReader: mgr.GetLocalManager().GetAPIReader()}),
		})
}

// snippet:end aware-wiring

// hostRequest is a request for a FleetConfigMap: an object of the host, the local cluster.
func hostRequest(namespace, name string) mcr.Request {
	return mcr.Request{
		ClusterName: mcr.LocalCluster,
		Request:     ctrlreconcile.Request{NamespacedName: client.ObjectKey{Namespace: namespace, Name: name}},
	}
}

// Reconciler keeps the copies of a FleetConfigMap in every member and reports on them.
type Reconciler struct {
	Manager mcr.Manager
	// Copies tracks the copies: their clusters and the finalizer on the FleetConfigMap.
	Copies *ownership.Tracker
	// Status writes the members' results to the FleetConfigMap's status.
	Status *fleetstatus.Aggregator
}

// snippet:begin aware-reconcile

// Reconcile brings every member's copy of one FleetConfigMap in line with its spec, or deletes
// the copies when the FleetConfigMap is being deleted, and writes the outcome to its status.
func (r *Reconciler) Reconcile(ctx context.Context, req mcr.Request) (mcr.Result, error) {
	host := r.Manager.GetLocalManager().GetClient()
	src := &FleetConfigMap{}
	if err := host.Get(ctx, req.NamespacedName, src); err != nil {
		return mcr.Result{}, client.IgnoreNotFound(err)
	}
	members := r.members()

	// Deleted in the host: delete the copies in every member that holds one, then let the
	// FleetConfigMap go.
	if !src.DeletionTimestamp.IsZero() {
		return r.Copies.Finalize(ctx, req.ClusterName, src)
	}
	// The finalizer and the members about to hold copies, recorded before the copies exist.
	if err := r.Copies.Track(ctx, req.ClusterName, src, members...); err != nil {
		return mcr.Result{}, err
	}
	owner, err := r.Copies.Owner(ctx, req.ClusterName, src)
	if err != nil {
		return mcr.Result{}, err
	}

	// Spec down: write the copy in every member, all members at once.
	results := r.forEachMember(ctx, members, func(ctx context.Context, name mcr.ClusterName, cl cluster.Cluster) error {
		return writeCopy(ctx, cl.GetClient(), src, owner)
	})

	// Status up: a condition per member and the summary, written when they change. A member
	// that left the fleet has no result and drops out.
	res, err := r.Status.Update(ctx, src, results.fleetResults())
	if err != nil {
		return mcr.Result{}, err
	}
	if failing := results.failing(); failing > 0 {
		mcr.LoggerFrom(ctx).Info("Some members are out of sync; retrying", "failing", failing, "members", len(results))
		// The sooner of the retry and the write of a deferred status.
		return fleetstatus.Sooner(res, mcr.Result{RequeueAfter: retryAfter}), nil
	}
	return res, nil
}

// snippet:end aware-reconcile

// members returns the member clusters: every engaged cluster except the host itself, which is
// engaged too when the manager is asked to treat it as a member.
func (r *Reconciler) members() []mcr.ClusterName {
	var names []mcr.ClusterName
	for _, name := range r.Manager.EngagedClusters() {
		if name != mcr.LocalCluster {
			names = append(names, name)
		}
	}
	return names
}

// memberResults maps each member to the outcome of an operation on it.
type memberResults map[mcr.ClusterName]error

// forEachMember runs fn for every member in parallel, each bounded by memberTimeout.
func (r *Reconciler) forEachMember(ctx context.Context, members []mcr.ClusterName, fn func(context.Context, mcr.ClusterName, cluster.Cluster) error) memberResults {
	var (
		mu      sync.Mutex
		wg      sync.WaitGroup
		results = memberResults{}
	)
	for _, name := range members {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, memberTimeout)
			defer cancel()
			cl, err := r.Manager.GetCluster(ctx, name)
			if err == nil {
				err = fn(ctx, name, cl)
			}
			if err != nil {
				mcr.LoggerFrom(ctx).Error(err, "Member out of sync", "cluster", name)
			}
			mu.Lock()
			results[name] = err
			mu.Unlock()
		})
	}
	wg.Wait()
	return results
}

// fleetResults turns the outcome on each member into its Synced condition.
func (m memberResults) fleetResults() []fleetstatus.Result {
	out := make([]fleetstatus.Result, 0, len(m))
	for name, err := range m {
		out = append(out, fleetstatus.FromError(name, err))
	}
	return out
}

func (m memberResults) failing() int {
	n := 0
	for _, err := range m {
		if err != nil {
			n++
		}
	}
	return n
}

// writeCopy creates or updates the member's copy of src, marked with its owner, and its
// namespace. A ConfigMap of that name that another owner marked is left alone (an error).
func writeCopy(ctx context.Context, c client.Client, src *FleetConfigMap, owner ownership.Owner) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: src.Namespace}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", src.Namespace, err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: src.Namespace, Name: src.Name}}
	_, err := controllerutil.CreateOrUpdate(ctx, c, cm, func() error {
		cm.Data = maps.Clone(src.Spec.Data)
		return ownership.SetOwner(cm, owner)
	})
	if err != nil {
		return fmt.Errorf("writing ConfigMap %s/%s: %w", src.Namespace, src.Name, err)
	}
	return nil
}

// membershipEvents is a runnable that the manager engages with every cluster, like a
// controller. It turns every engagement and every end of one into an event on a channel that
// the controller watches. Events are coalesced: one pending event already makes the controller
// reconcile every FleetConfigMap against the fleet as it is when that happens.
type membershipEvents struct {
	events chan event.GenericEvent
}

func (m *membershipEvents) Engage(ctx context.Context, _ mcr.ClusterName, _ cluster.Cluster) error {
	m.notify()
	context.AfterFunc(ctx, m.notify) // the cluster left the fleet
	return nil
}

func (m *membershipEvents) notify() {
	select {
	case m.events <- event.GenericEvent{Object: &FleetConfigMap{}}:
	default: // one is pending already
	}
}

func (m *membershipEvents) Start(ctx context.Context) error {
	<-ctx.Done()
	return nil
}
