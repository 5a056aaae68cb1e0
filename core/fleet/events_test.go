// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/fleet"
	"mcr.dev/core/internal/testcheck"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/nop"
)

// One handler hears about the ConfigMaps of every engaged cluster, each event with its
// cluster: the objects of the clusters engaged when it is added, then their changes; a cluster
// engaged later is announced with adds of its objects; a disengaged cluster, or a removed
// registration, leaves no handler on any informer and delivers nothing more.
func TestEventHandler(t *testing.T) {
	ns := namespace(t, "a", "b", "c")
	create(t, "a", configMap(ns, "before", nil, nil))
	r := newReader(t, newManager(t, nop.New()), fleet.Options{})
	a := startedCluster(t, newCountingCluster(t, "a"))
	b := startedCluster(t, newCountingCluster(t, "b"))
	c := startedCluster(t, newCountingCluster(t, "c"))
	// The manager engages clusters with the reader; here the test does, to end b's engagement
	// while its cluster keeps running.
	engage := func(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster) {
		t.Helper()
		if err := r.Engage(ctx, name, cl); err != nil {
			t.Fatal(err)
		}
	}
	// Adds are initial when the informer has listed the object: wait until it has.
	cached(t, a, configMap(ns, "before", nil, nil))
	engage(t.Context(), "a", a)
	bCtx, disengageB := context.WithCancel(t.Context())
	defer disengageB()
	engage(bCtx, "b", b)

	rec := &events{ns: ns}
	reg, err := r.AddEventHandler(t.Context(), &corev1.ConfigMap{}, rec)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Remove()
	testcheck.WaitFor(t, "the registration to sync", reg.HasSynced)
	rec.waitFor(t, "add a/before initial")

	create(t, "b", configMap(ns, "in-b", nil, nil))
	rec.waitFor(t, "add b/in-b")
	cm := &corev1.ConfigMap{}
	if err := memberClient(t, "a").Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "before"}, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data = map[string]string{"changed": "yes"}
	if err := memberClient(t, "a").Update(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	rec.waitFor(t, "update a/before")
	if err := memberClient(t, "b").Delete(t.Context(), configMap(ns, "in-b", nil, nil)); err != nil {
		t.Fatal(err)
	}
	rec.waitFor(t, "delete b/in-b")

	create(t, "c", configMap(ns, "before-c", nil, nil))
	cached(t, c, configMap(ns, "before-c", nil, nil))
	engage(t.Context(), "c", c)
	rec.waitFor(t, "add c/before-c initial")
	testcheck.WaitFor(t, "the registration to sync c", reg.HasSynced)

	disengageB()
	testcheck.WaitFor(t, "b's handler to be removed", func() bool { return b.handlers() == 0 })
	create(t, "b", configMap(ns, "after-disengage", nil, nil))
	create(t, "a", configMap(ns, "marker", nil, nil))
	rec.waitFor(t, "add a/marker")
	if a.handlers() != 1 || c.handlers() != 1 {
		t.Fatalf("a has %d handlers and c %d, want one each", a.handlers(), c.handlers())
	}

	reg.Remove()
	if a.handlers() != 0 || c.handlers() != 0 {
		t.Fatalf("after Remove, a has %d handlers and c %d, want none", a.handlers(), c.handlers())
	}
	seen := rec.count()
	create(t, "a", configMap(ns, "after-remove", nil, nil))
	// Nothing is delivered once Remove has returned, so a's informer seeing the object shows the
	// event had its chance.
	testcheck.WaitFor(t, "a's cache to see after-remove", func() bool {
		return a.GetCache().Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "after-remove"}, &corev1.ConfigMap{}) == nil
	})
	if rec.count() != seen {
		t.Fatalf("events after Remove: %q", rec.all()[seen:])
	}

	for _, e := range rec.all() {
		if strings.Contains(e, "b/after-disengage") {
			t.Fatalf("an event of disengaged b was delivered: %q", e)
		}
	}
}

// The handler's calls are serial, across clusters too: the initial lists of three clusters,
// delivered by three informers at once, reach it one call at a time.
func TestEventHandlerCallsAreSerial(t *testing.T) {
	names := []multicluster.ClusterName{"a", "b", "c"}
	ns := namespace(t, "a", "b", "c")
	const perCluster = 20
	for _, name := range names {
		for i := range perCluster {
			create(t, string(name), configMap(ns, fmt.Sprintf("cm-%d", i), nil, nil))
		}
	}
	r := newReader(t, newManager(t, nop.New()), fleet.Options{})
	for _, name := range names {
		if err := r.Engage(t.Context(), name, startedCluster(t, newCluster(t, members.Member(string(name)).Config()))); err != nil {
			t.Fatal(err)
		}
	}
	rec := &events{ns: ns, dwell: time.Millisecond}
	reg, err := r.AddEventHandler(t.Context(), &corev1.ConfigMap{}, rec)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Remove()
	testcheck.WaitFor(t, "every initial add", func() bool { return rec.count() == len(names)*perCluster })
	if n := rec.overlaps.Load(); n > 0 {
		t.Fatalf("the handler was called %d times while a call was in progress", n)
	}
}

// An event handler that cannot be added to a cluster (it does not serve the kind yet) is
// returned with a *PartialError naming it, delivers the other clusters' events, and reaches
// the cluster once it serves the kind.
func TestEventHandlerWaitsForKind(t *testing.T) {
	ns := namespace(t, "a", "b")
	// A group of its own, since the members outlive the test (-count).
	kind := schema.GroupVersionKind{Group: ns + ".fleet.mcr.dev", Version: "v1", Kind: "Widget"}
	installWidgets(t, "a", kind)
	create(t, "a", widget(kind, ns, "in-a"))
	r := newReader(t, newManager(t, nop.New()), fleet.Options{})
	a := startedCluster(t, newCluster(t, members.Member("a").Config()))
	cached(t, a, widget(kind, ns, "in-a"))
	if err := r.Engage(t.Context(), "a", a); err != nil {
		t.Fatal(err)
	}
	if err := r.Engage(t.Context(), "b", startedCluster(t, newCluster(t, members.Member("b").Config()))); err != nil {
		t.Fatal(err)
	}
	rec := &events{ns: ns}
	reg, err := r.AddEventHandler(t.Context(), widget(kind, "", ""), rec)
	if reg == nil {
		t.Fatalf("no registration: %v", err)
	}
	defer reg.Remove()
	partial, ok := errors.AsType[*fleet.PartialError](err)
	if !ok || !slices.Equal(partial.Failed(), []multicluster.ClusterName{"b"}) {
		t.Fatalf("AddEventHandler: %v, want a *fleet.PartialError naming b", err)
	}
	if !strings.Contains(err.Error(), "Widget") {
		t.Fatalf("error %q does not name the kind", err)
	}
	rec.waitFor(t, "add a/in-a initial")

	installWidgets(t, "b", kind)
	create(t, "b", widget(kind, ns, "in-b"))
	// Its add is initial or not, depending on whether b's informer listed it.
	testcheck.WaitFor(t, "the add of b/in-b", func() bool {
		return slices.ContainsFunc(rec.all(), func(e string) bool { return strings.HasPrefix(e, "add b/in-b") })
	})
}

func widget(kind schema.GroupVersionKind, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// installWidgets installs a CRD of kind (a Widget) in member and waits until it serves it.
func installWidgets(t *testing.T, member string, kind schema.GroupVersionKind) {
	t.Helper()
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": "widgets." + kind.Group},
		"spec": map[string]any{
			"group": kind.Group,
			"scope": "Namespaced",
			"names": map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
			"versions": []any{map[string]any{
				"name": kind.Version, "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object", "x-kubernetes-preserve-unknown-fields": true,
				}},
			}},
		},
	}}
	create(t, member, crd)
	c := memberClient(t, member)
	testcheck.WaitFor(t, "Widgets to be served in "+member, func() bool {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(kind.GroupVersion().WithKind("WidgetList"))
		return c.List(t.Context(), list) == nil
	})
}

// cached waits until cl's cache holds obj (of its kind, namespace and name).
func cached(t *testing.T, cl cluster.Cluster, obj client.Object) {
	t.Helper()
	testcheck.WaitFor(t, "the cache to hold "+obj.GetName(), func() bool {
		return cl.GetCache().Get(t.Context(), client.ObjectKeyFromObject(obj), obj) == nil
	})
}

// events records what a handler is told about the objects of one namespace, as
// "add|update|delete cluster/name[ initial]", and counts calls that overlap.
type events struct {
	ns string
	// dwell is how long each call takes, to give overlapping calls a chance to show.
	dwell    time.Duration
	busy     atomic.Bool
	overlaps atomic.Int64

	mu   sync.Mutex
	seen []string
}

func (e *events) record(cluster multicluster.ClusterName, obj client.Object, format string, args ...any) {
	if !e.busy.CompareAndSwap(false, true) {
		e.overlaps.Add(1)
	} else {
		defer e.busy.Store(false)
	}
	time.Sleep(e.dwell)
	if obj.GetNamespace() != e.ns {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.seen = append(e.seen, fmt.Sprintf(format, args...))
}

func (e *events) OnAdd(cluster multicluster.ClusterName, obj client.Object, isInInitialList bool) {
	suffix := ""
	if isInInitialList {
		suffix = " initial"
	}
	e.record(cluster, obj, "add %s/%s%s", cluster, obj.GetName(), suffix)
}

func (e *events) OnUpdate(cluster multicluster.ClusterName, _, obj client.Object) {
	e.record(cluster, obj, "update %s/%s", cluster, obj.GetName())
}

func (e *events) OnDelete(cluster multicluster.ClusterName, obj client.Object) {
	e.record(cluster, obj, "delete %s/%s", cluster, obj.GetName())
}

func (e *events) all() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.seen)
}

func (e *events) count() int { return len(e.all()) }

func (e *events) waitFor(t *testing.T, event string) {
	t.Helper()
	testcheck.WaitFor(t, "event "+event, func() bool { return slices.Contains(e.all(), event) })
}

// countingCluster is a real cluster whose informers count the event handlers added to them and
// not removed yet.
type countingCluster struct {
	cluster.Cluster
	cache *countingCache
}

func newCountingCluster(t testing.TB, member string) *countingCluster {
	t.Helper()
	cl := newCluster(t, members.Member(member).Config())
	return &countingCluster{Cluster: cl, cache: &countingCache{Cache: cl.GetCache()}}
}

func (c *countingCluster) GetCache() cache.Cache { return c.cache }

func (c *countingCluster) handlers() int { return int(c.cache.handlers.Load()) }

type countingCache struct {
	cache.Cache
	handlers atomic.Int64
}

func (c *countingCache) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	inf, err := c.Cache.GetInformer(ctx, obj, opts...)
	if err != nil {
		return nil, err
	}
	return &countingInformer{Informer: inf, cache: c}, nil
}

type countingInformer struct {
	cache.Informer
	cache *countingCache
}

func (i *countingInformer) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	reg, err := i.Informer.AddEventHandler(h)
	if err == nil {
		i.cache.handlers.Add(1)
	}
	return reg, err
}

func (i *countingInformer) RemoveEventHandler(reg toolscache.ResourceEventHandlerRegistration) error {
	err := i.Informer.RemoveEventHandler(reg)
	if err == nil {
		i.cache.handlers.Add(-1)
	}
	return err
}
