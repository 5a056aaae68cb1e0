// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package namespace

import (
	"context"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/internal/testcheck"
)

// eventRecorder is a client-go event handler that records what it saw.
type eventRecorder struct {
	mu     sync.Mutex
	events []string
	// bad records objects that were not shown in the inner namespace.
	bad []string
}

func (r *eventRecorder) record(kind string, obj any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var name, ns string
	switch o := obj.(type) {
	case toolscache.DeletedFinalStateUnknown:
		ns, name, _ = toolscache.SplitMetaNamespaceKey(o.Key)
		if inner, ok := o.Obj.(client.Object); ok && inner.GetNamespace() != ns {
			r.bad = append(r.bad, "tombstone object in "+inner.GetNamespace())
		}
		kind += "-tombstone"
	case client.Object:
		name, ns = o.GetName(), o.GetNamespace()
	}
	if ns != InnerNamespace {
		r.bad = append(r.bad, kind+" "+name+" in "+ns)
	}
	r.events = append(r.events, kind+" "+name)
}

func (r *eventRecorder) OnAdd(obj any, _ bool)  { r.record("add", obj) }
func (r *eventRecorder) OnUpdate(_, obj any)    { r.record("update", obj) }
func (r *eventRecorder) OnDelete(obj any)       { r.record("delete", obj) }
func (r *eventRecorder) seen(event string) bool { return r.index(event) >= 0 }
func (r *eventRecorder) snapshot() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}
func (r *eventRecorder) problems() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.bad...)
}
func (r *eventRecorder) index(event string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, e := range r.events {
		if e == event {
			return i
		}
	}
	return -1
}

func TestInformerSeesOnlyItsNamespace(t *testing.T) {
	ctx := t.Context()
	host := startHost(t)
	_, aware := startProvider(t, host)
	a := createNamespace(t, host, aware, "informer-a")
	b := createNamespace(t, host, aware, "informer-b")

	// An object that exists before the handler is added is replayed to it.
	if err := a.GetClient().Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "early"}}); err != nil {
		t.Fatal(err)
	}
	testcheck.WaitFor(t, "the host cache to see the early object", func() bool {
		var cm corev1.ConfigMap
		return host.GetCache().Get(ctx, client.ObjectKey{Namespace: a.HostNamespace(), Name: "early"}, &cm) == nil
	})

	informer, err := a.GetCache().GetInformer(ctx, &corev1.ConfigMap{})
	if err != nil {
		t.Fatal(err)
	}
	seen := &eventRecorder{}
	reg, err := informer.AddEventHandler(seen)
	if err != nil {
		t.Fatal(err)
	}
	testcheck.WaitFor(t, "the registration to sync", reg.HasSynced)
	if !seen.seen("add early") {
		t.Fatalf("existing object not replayed: %v", seen.snapshot())
	}

	for _, cl := range []*Cluster{a, b} {
		if err := cl.GetClient().Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "live-" + cl.HostNamespace()}}); err != nil {
			t.Fatal(err)
		}
	}
	cm := &corev1.ConfigMap{}
	if err := a.GetClient().Get(ctx, client.ObjectKey{Namespace: InnerNamespace, Name: "early"}, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data = map[string]string{"changed": "yes"}
	if err := a.GetClient().Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	if err := a.GetClient().Delete(ctx, cm); err != nil {
		t.Fatal(err)
	}
	testcheck.WaitFor(t, "the delete to be delivered", func() bool { return seen.seen("delete early") })
	if !seen.seen("add live-"+a.HostNamespace()) || !seen.seen("update early") {
		t.Fatalf("missing events: %v", seen.snapshot())
	}
	// The write to b happened before the delete in a; had it been delivered, it would be there.
	if seen.seen("add live-" + b.HostNamespace()) {
		t.Fatalf("saw an object of another namespace: %v", seen.snapshot())
	}
	if bad := seen.problems(); len(bad) > 0 {
		t.Fatalf("objects not shown in the inner namespace: %v", bad)
	}

	// The shared host cache was not modified by the rewrite.
	var onHost corev1.ConfigMap
	if err := host.GetCache().Get(ctx, client.ObjectKey{Namespace: a.HostNamespace(), Name: "live-" + a.HostNamespace()}, &onHost); err != nil || onHost.Namespace != a.HostNamespace() {
		t.Fatalf("host cache object: %v, namespace %q", err, onHost.Namespace)
	}

	// One host registration serves every namespace-cluster; disengaging removes the handlers.
	bInformer, err := b.GetCache().GetInformer(ctx, &corev1.ConfigMap{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bInformer.AddEventHandler(&eventRecorder{}); err != nil {
		t.Fatal(err)
	}
	d := informer.(*scopedInformer).dispatcher
	if bInformer.(*scopedInformer).dispatcher != d {
		t.Fatal("two namespace-clusters got different dispatchers for one host informer")
	}
	if n := d.handlers(); n != 2 {
		t.Fatalf("%d handlers registered, want 2", n)
	}
	if err := informer.RemoveEventHandler(reg); err != nil {
		t.Fatal(err)
	}
	if n := d.handlers(); n != 1 {
		t.Fatalf("%d handlers after RemoveEventHandler, want 1", n)
	}
	if err := host.GetClient().Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: b.HostNamespace()}}); err != nil {
		t.Fatal(err)
	}
	testcheck.WaitFor(t, "b's handlers to be removed", func() bool { return d.handlers() == 0 })
	if _, err := bInformer.AddEventHandler(&eventRecorder{}); err == nil {
		t.Fatal("a disengaged namespace-cluster accepted a handler")
	}
}

func TestDispatchRewritesTombstones(t *testing.T) {
	host := startHost(t)
	informer, err := host.GetCache().GetInformer(t.Context(), &corev1.ConfigMap{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := newDispatcher(informer)
	if err != nil {
		t.Fatal(err)
	}
	seen := &eventRecorder{}
	d.add("tenant", true, seen)
	other := &eventRecorder{}
	d.add("elsewhere", true, other)

	last := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant", Name: "gone"}}
	d.onDelete(toolscache.DeletedFinalStateUnknown{Key: "tenant/gone", Obj: last})
	d.onDelete(toolscache.DeletedFinalStateUnknown{Key: "tenant/unknown-state"})

	if got := seen.snapshot(); len(got) != 2 || got[0] != "delete-tombstone gone" || got[1] != "delete-tombstone unknown-state" {
		t.Fatalf("events = %v", got)
	}
	if bad := seen.problems(); len(bad) > 0 {
		t.Fatalf("tombstones not rewritten: %v", bad)
	}
	if last.Namespace != "tenant" {
		t.Fatal("the tombstone's object was modified instead of copied")
	}
	if got := other.snapshot(); len(got) != 0 {
		t.Fatalf("another namespace got %v", got)
	}
}

func TestEventRecordersWriteToTheHostNamespace(t *testing.T) {
	ctx := t.Context()
	host := startHost(t)
	_, aware := startProvider(t, host)
	cl := createNamespace(t, host, aware, "recorder")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "noted"}}
	if err := cl.GetClient().Create(ctx, cm); err != nil {
		t.Fatal(err)
	}

	cl.GetEventRecorderFor("namespace-test").Event(cm, corev1.EventTypeNormal, "Legacy", "recorded through the namespace-cluster")
	cl.GetEventRecorder("namespace-test").Eventf(cm, nil, corev1.EventTypeNormal, "Modern", "Testing", "recorded through the namespace-cluster")
	// controller-runtime v0.25's recorder also records annotated events; both the regarding and
	// the related object must be mapped.
	cl.GetEventRecorder("namespace-test").AnnotatedEventf(cm, cm, map[string]string{"mcr.dev/test": "annotated"},
		corev1.EventTypeNormal, "Annotated", "Testing", "recorded through the namespace-cluster")

	testcheck.WaitFor(t, "all three events in the host namespace", func() bool {
		var legacy corev1.EventList
		var modern eventsv1.EventList
		if err := host.GetAPIReader().List(context.Background(), &legacy, client.InNamespace(cl.HostNamespace())); err != nil {
			t.Fatal(err)
		}
		if err := host.GetAPIReader().List(context.Background(), &modern, client.InNamespace(cl.HostNamespace())); err != nil {
			t.Fatal(err)
		}
		found := 0
		for _, e := range legacy.Items {
			if e.Reason == "Legacy" && e.InvolvedObject.Name == "noted" && e.InvolvedObject.Namespace == cl.HostNamespace() {
				found++
			}
		}
		for _, e := range modern.Items {
			if e.Reason == "Modern" && e.Regarding.Name == "noted" && e.Regarding.Namespace == cl.HostNamespace() {
				found++
			}
			if e.Reason == "Annotated" && e.Regarding.Namespace == cl.HostNamespace() &&
				e.Related != nil && e.Related.Namespace == cl.HostNamespace() && e.Annotations["mcr.dev/test"] == "annotated" {
				found++
			}
		}
		return found >= 3
	})
	if cm.Namespace != InnerNamespace {
		t.Fatal("recording an event modified the caller's object")
	}
}
