// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package ownership_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ktypes "k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/internal/testcheck"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/ownership"
)

// A projection changed or deleted in a member reconciles its owner in the hub again, which
// puts it back.
func TestProjectionEventsReconcileTheOwner(t *testing.T) {
	f := newTestFleet(t)
	r := f.addController(t, ownership.Options{})
	f.start(t)
	owner := f.createOwner(t, "app", map[string]string{"level": "info"})
	f.waitProjected(t, owner, "east", "west")

	// Changed in east.
	before := r.count("app")
	east := f.projection(t, "east", "app")
	east.Data = map[string]string{"level": "drifted"}
	if err := f.members["east"].Update(t.Context(), east); err != nil {
		t.Fatal(err)
	}
	testcheck.WaitFor(t, "the owner reconciled after the change in east", func() bool { return r.count("app") > before })
	f.waitProjected(t, owner, "east")

	// Deleted in west.
	west := f.projection(t, "west", "app")
	before = r.count("app")
	if err := f.members["west"].Delete(t.Context(), west); err != nil {
		t.Fatal(err)
	}
	testcheck.WaitFor(t, "the owner reconciled after the delete in west", func() bool { return r.count("app") > before })
	testcheck.WaitFor(t, "a new copy in west", func() bool {
		cm := f.projection(t, "west", "app")
		return cm != nil && cm.UID != west.UID
	})
	f.waitProjected(t, owner, "west")
}

// Deleting the owner deletes its projections in every member, and then the owner.
func TestDeletingTheOwnerDeletesProjectionsEverywhere(t *testing.T) {
	f := newTestFleet(t)
	f.addController(t, ownership.Options{})
	f.start(t)
	owner := f.createOwner(t, "app", map[string]string{"k": "v"})
	f.waitProjected(t, owner, "east", "west")

	got := &corev1.ConfigMap{}
	testcheck.WaitFor(t, "the finalizer and the record of east and west", func() bool {
		if err := f.hub.Get(t.Context(), client.ObjectKeyFromObject(owner), got); err != nil {
			t.Fatal(err)
		}
		return slices.Contains(got.Finalizers, ownership.DefaultFinalizer) &&
			slices.Equal(recorded(t, got), []string{"east", "west"})
	})
	if err := f.hub.Delete(t.Context(), owner); err != nil {
		t.Fatal(err)
	}
	testcheck.WaitFor(t, "the owner deleted", func() bool { return f.ownerGone(t, "app") })
	for _, member := range []string{"east", "west"} {
		if cm := f.projection(t, member, "app"); cm != nil {
			t.Errorf("the copy in %s outlived its owner: %v", member, cm.ObjectMeta)
		}
	}
}

// A member whose API server is down while the owner is deleted keeps the finalizer; its
// projection is deleted once it is back, and only then is the owner released.
func TestMemberDownDuringDeletion(t *testing.T) {
	f := newTestFleet(t)
	f.addController(t, ownership.Options{ClusterTimeout: 5 * time.Second})
	f.start(t)
	owner := f.createOwner(t, "app", map[string]string{"k": "v"})
	f.waitProjected(t, owner, "east", "west")

	west := fleet.Member("west")
	if err := west.Stop(); err != nil {
		t.Fatal(err)
	}
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			_ = west.Start(context.Background())
		}
	})
	if err := f.hub.Delete(t.Context(), owner); err != nil {
		t.Fatal(err)
	}
	// East is cleaned in the same Finalize that fails on west.
	testcheck.WaitFor(t, "the copy in east deleted", func() bool { return f.projection(t, "east", "app") == nil })
	got := &corev1.ConfigMap{}
	if err := f.hub.Get(t.Context(), client.ObjectKeyFromObject(owner), got); err != nil {
		t.Fatalf("the owner went while west still holds its copy: %v", err)
	}
	if !slices.Contains(got.Finalizers, ownership.DefaultFinalizer) {
		t.Fatalf("finalizers %v while west is down", got.Finalizers)
	}

	restarted = true
	if err := west.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	testcheck.WaitFor(t, "the owner deleted once west is back", func() bool { return f.ownerGone(t, "app") })
	if cm := f.projection(t, "west", "app"); cm != nil {
		t.Errorf("the copy in west outlived its owner: %v", cm.ObjectMeta)
	}
}

// A member that is disengaged while the owner is deleted is remembered on the owner; when it
// is engaged again, its projection's event brings the owner back to Finalize, which deletes
// it and releases the owner. RecheckInterval is an hour: only the event can do it.
func TestDisengagedMemberCleanedWhenEngagedAgain(t *testing.T) {
	f := newTestFleet(t)
	f.addController(t, ownership.Options{RecheckInterval: time.Hour})
	f.start(t)
	owner := f.createOwner(t, "app", map[string]string{"k": "v"})
	f.waitProjected(t, owner, "east", "west")

	f.provider.Remove("west")
	if err := f.hub.Delete(t.Context(), owner); err != nil {
		t.Fatal(err)
	}
	got := &corev1.ConfigMap{}
	testcheck.WaitFor(t, "east cleaned and west recorded as missing", func() bool {
		if err := f.hub.Get(t.Context(), client.ObjectKeyFromObject(owner), got); err != nil {
			t.Fatalf("the owner went while west, disengaged, holds its copy: %v", err)
		}
		return slices.Equal(recorded(t, got), []string{"west"}) && missingSince(t, got, "west") && f.projection(t, "east", "app") == nil
	})
	if f.projection(t, "west", "app") == nil {
		t.Fatal("the copy in west was deleted while west was disengaged")
	}
	if !slices.Contains(got.Finalizers, ownership.DefaultFinalizer) {
		t.Fatalf("finalizers %v while west is disengaged", got.Finalizers)
	}
	if !hasEvent(t, f, got, ownership.ReasonWaiting) {
		t.Errorf("no %s Event on the owner", ownership.ReasonWaiting)
	}

	f.engage(t, "west")
	testcheck.WaitFor(t, "the owner deleted once west is engaged again", func() bool { return f.ownerGone(t, "app") })
	if cm := f.projection(t, "west", "app"); cm != nil {
		t.Errorf("the copy in west outlived its owner: %v", cm.ObjectMeta)
	}
}

// With GiveUpAfter, a member that stays disengaged is given up, visibly (a Warning Event), and
// the owner released; its projection is an orphan that the sweep deletes once the member is
// engaged again (a dry run first only reports it).
func TestGiveUpAndSweep(t *testing.T) {
	f := newTestFleet(t)
	f.addController(t, ownership.Options{GiveUpAfter: time.Second, RecheckInterval: 100 * time.Millisecond})
	f.start(t)
	owner := f.createOwner(t, "app", map[string]string{"k": "v"})
	f.waitProjected(t, owner, "east", "west")

	f.provider.Remove("west")
	if err := f.hub.Delete(t.Context(), owner); err != nil {
		t.Fatal(err)
	}
	testcheck.WaitFor(t, "the owner released by the give-up policy", func() bool { return f.ownerGone(t, "app") })
	if !hasEvent(t, f, owner, ownership.ReasonAbandoned) {
		t.Errorf("no %s Event on the owner", ownership.ReasonAbandoned)
	}
	if f.projection(t, "west", "app") == nil {
		t.Fatal("the copy in west went while west was disengaged")
	}

	f.engage(t, "west")
	testcheck.WaitFor(t, "west engaged again", func() bool { return len(f.mgr.EngagedClusters()) == 2 })
	dryRun := newTracker(t, f.mgr, ownership.Options{DryRun: true})
	reportedBefore := counter(t, "mcr_ownership_orphans_total", map[string]string{"cluster": "west", "action": ownership.ActionReported})
	report, err := dryRun.Sweeper(ownerKind).Sweep(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if found := orphansIn(report, f.ns); len(found) != 1 || found[0].Cluster != "west" || found[0].Key.Name != "app" || report.Deleted != 0 {
		t.Fatalf("dry-run report %+v, want the copy in west, not deleted", report)
	}
	if f.projection(t, "west", "app") == nil {
		t.Fatal("the dry run deleted the orphan")
	}
	if got := counter(t, "mcr_ownership_orphans_total", map[string]string{"cluster": "west", "action": ownership.ActionReported}); got != reportedBefore+1 {
		t.Errorf("reported orphans %v, want %v", got, reportedBefore+1)
	}

	if err := f.mgr.Add(newTracker(t, f.mgr, ownership.Options{SweepInterval: 100 * time.Millisecond}).Sweeper(ownerKind)); err != nil {
		t.Fatal(err)
	}
	testcheck.WaitFor(t, "the orphan in west swept", func() bool { return f.projection(t, "west", "app") == nil })
}

// An orphan created while no controller ran is swept: a projection of an owner that does not
// exist, and one of an owner whose name now belongs to an object of another UID. A projection
// of a live owner, and one of an owner of another kind, stay.
func TestSweepOrphansCreatedWhileDown(t *testing.T) {
	f := newTestFleet(t)
	live := f.createOwner(t, "live", nil)
	ref := func(name string, uid string) ownership.Owner {
		return ownership.Owner{Cluster: mcmanager.LocalCluster, Kind: "ConfigMap", Namespace: f.ns, Name: name, UID: ktypes.UID(uid)}
	}
	marked := map[string]ownership.Owner{
		"of-nobody":       ref("nobody", "8d9c5a4e-0000-4000-8000-000000000001"),
		"of-former-live":  ref("live", "8d9c5a4e-0000-4000-8000-000000000002"),
		"of-live":         ref("live", string(live.UID)),
		"of-another-kind": {Cluster: mcmanager.LocalCluster, Group: "example.com", Kind: "Other", Namespace: f.ns, Name: "nobody", UID: "8d9c5a4e-0000-4000-8000-000000000003"},
	}
	for name, owner := range marked {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name}}
		if err := ownership.SetOwner(cm, owner); err != nil {
			t.Fatal(err)
		}
		if err := f.members["east"].Create(t.Context(), cm); err != nil {
			t.Fatal(err)
		}
	}

	if err := f.mgr.Add(newTracker(t, f.mgr, ownership.Options{SweepInterval: 100 * time.Millisecond}).Sweeper(ownerKind)); err != nil {
		t.Fatal(err)
	}
	deletedBefore := counter(t, "mcr_ownership_orphans_total", map[string]string{"cluster": "east", "action": ownership.ActionDeleted})
	f.start(t)
	testcheck.WaitFor(t, "both orphans swept", func() bool {
		return f.projection(t, "east", "of-nobody") == nil && f.projection(t, "east", "of-former-live") == nil
	})
	for _, name := range []string{"of-live", "of-another-kind"} {
		if f.projection(t, "east", name) == nil {
			t.Errorf("%s was swept", name)
		}
	}
	if got := counter(t, "mcr_ownership_orphans_total", map[string]string{"cluster": "east", "action": ownership.ActionDeleted}); got < deletedBefore+2 {
		t.Errorf("deleted orphans %v, want at least %v", got, deletedBefore+2)
	}
}

// A new owner of the name of a former one never adopts the former one's projection, nor
// deletes it when it is deleted itself.
func TestNewOwnerOfTheSameNameNeverAdopts(t *testing.T) {
	f := newTestFleet(t)
	r := f.addController(t, ownership.Options{})
	former := ownership.Owner{Cluster: mcmanager.LocalCluster, Kind: "ConfigMap", Namespace: f.ns, Name: "app", UID: "8d9c5a4e-0000-4000-8000-00000000000f"}
	stale := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "app"}, Data: map[string]string{"from": "former"}}
	if err := ownership.SetOwner(stale, former); err != nil {
		t.Fatal(err)
	}
	if err := f.members["east"].Create(t.Context(), stale); err != nil {
		t.Fatal(err)
	}
	f.start(t)

	owner := f.createOwner(t, "app", map[string]string{"from": "new"})
	f.waitProjected(t, owner, "west")
	testcheck.WaitFor(t, "the owner reconciled twice (east refused)", func() bool { return r.count("app") >= 2 })
	east := f.projection(t, "east", "app")
	if got, err := ownership.GetOwner(east); err != nil || got != former || east.Data["from"] != "former" {
		t.Fatalf("the former owner's copy in east was taken over: owner %v (%v), data %v", got, err, east.Data)
	}

	if err := f.hub.Delete(t.Context(), owner); err != nil {
		t.Fatal(err)
	}
	testcheck.WaitFor(t, "the owner deleted", func() bool { return f.ownerGone(t, "app") })
	if f.projection(t, "west", "app") != nil {
		t.Error("the new owner's copy in west outlived it")
	}
	if cm := f.projection(t, "east", "app"); cm == nil || cm.UID != east.UID {
		t.Error("deleting the new owner deleted the former owner's copy in east")
	}
}

// Finalize of an owner that is not being deleted does nothing, and Track refuses an owner
// that is.
func TestFinalizeAndTrackGuards(t *testing.T) {
	f := newTestFleet(t)
	tracker := newTracker(t, f.mgr, ownership.Options{})
	owner := f.createOwner(t, "app", nil)
	if res, err := tracker.Finalize(t.Context(), mcmanager.LocalCluster, owner); err != nil || !res.IsZero() {
		t.Fatalf("Finalize of a live owner: %v, %v", res, err)
	}
	owner.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	if err := tracker.Track(t.Context(), mcmanager.LocalCluster, owner, "east"); !errors.Is(err, ownership.ErrOwnerDeleting) {
		t.Fatalf("Track of a deleting owner: %v, want ErrOwnerDeleting", err)
	}
}

func newTracker(t *testing.T, mgr mcmanager.Manager, opts ownership.Options) *ownership.Tracker {
	t.Helper()
	opts.Projections = []client.ObjectList{&corev1.ConfigMapList{}}
	tracker, err := ownership.NewTracker(mgr, opts)
	if err != nil {
		t.Fatal(err)
	}
	return tracker
}

// orphansIn returns the orphans of report in namespace: tests share the fleet, and a sweep
// covers all of it.
func orphansIn(report ownership.SweepReport, namespace string) []ownership.Orphan {
	var found []ownership.Orphan
	for _, o := range report.Orphans {
		if o.Key.Namespace == namespace {
			found = append(found, o)
		}
	}
	return found
}

// recorded returns the clusters the owner's record names, sorted.
func recorded(t *testing.T, owner client.Object) []string {
	t.Helper()
	record := map[string]json.RawMessage{}
	if raw, ok := owner.GetAnnotations()[ownership.AnnotationClusters]; ok {
		if err := json.Unmarshal([]byte(raw), &record); err != nil {
			t.Fatal(err)
		}
	}
	names := make([]string, 0, len(record))
	for name := range record {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// missingSince reports whether the owner's record says since when cluster is not engaged.
func missingSince(t *testing.T, owner client.Object, cluster string) bool {
	t.Helper()
	return strings.Contains(owner.GetAnnotations()[ownership.AnnotationClusters], `"`+cluster+`":{"missingSince":`)
}

// hasEvent waits until the hub holds an Event of reason about owner (Events are written
// asynchronously) and reports true; it fails the test if none comes.
func hasEvent(t *testing.T, f *testFleet, owner client.Object, reason string) bool {
	t.Helper()
	testcheck.WaitFor(t, "a "+reason+" Event on "+owner.GetName(), func() bool {
		var events eventsv1.EventList
		if err := f.hub.List(t.Context(), &events, client.InNamespace(owner.GetNamespace())); err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(events.Items, func(e eventsv1.Event) bool {
			return e.Reason == reason && e.Regarding.UID == owner.GetUID()
		})
	})
	return true
}

// A cluster the manager does not engage, given as an extra cluster, is cleaned up by Finalize
// and swept like an engaged one.
func TestExtraClusters(t *testing.T) {
	f := newTestFleet(t)
	downstream := memberCluster(t, "hub") // not engaged: the manager's provider has east and west
	tracker := newTracker(t, f.mgr, ownership.Options{ExtraClusters: map[multicluster.ClusterName]cluster.Cluster{"downstream": downstream}})
	f.start(t)
	owner := f.createOwner(t, "app", nil)
	if err := tracker.Track(t.Context(), mcmanager.LocalCluster, owner, "downstream"); err != nil {
		t.Fatal(err)
	}
	ref, err := tracker.Owner(t.Context(), mcmanager.LocalCluster, owner)
	if err != nil {
		t.Fatal(err)
	}
	orphanRef := ref
	orphanRef.Name, orphanRef.UID = "nobody", "8d9c5a4e-0000-4000-8000-0000000000aa"
	for name, r := range map[string]ownership.Owner{"app-downstream": ref, "orphan-downstream": orphanRef} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name}}
		if err := ownership.SetOwner(cm, r); err != nil {
			t.Fatal(err)
		}
		if err := f.hub.Create(t.Context(), cm); err != nil {
			t.Fatal(err)
		}
	}
	exists := func(name string) bool {
		err := f.hub.Get(t.Context(), client.ObjectKey{Namespace: f.ns, Name: name}, &corev1.ConfigMap{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return err == nil
	}

	report, err := tracker.Sweeper(ownerKind).Sweep(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if found := orphansIn(report, f.ns); len(found) != 1 || found[0].Cluster != "downstream" || exists("orphan-downstream") || !exists("app-downstream") {
		t.Fatalf("sweep of the extra cluster: %+v; want only the orphan deleted", report)
	}

	if err := f.hub.Delete(t.Context(), owner); err != nil {
		t.Fatal(err)
	}
	if err := f.hub.Get(t.Context(), client.ObjectKeyFromObject(owner), owner); err != nil {
		t.Fatal(err)
	}
	if res, err := tracker.Finalize(t.Context(), mcmanager.LocalCluster, owner); err != nil || !res.IsZero() {
		t.Fatalf("Finalize: %v, %v", res, err)
	}
	if exists("app-downstream") {
		t.Error("the projection in the extra cluster outlived Finalize")
	}
	if !f.ownerGone(t, "app") {
		t.Error("the owner is still there after Finalize")
	}
}
