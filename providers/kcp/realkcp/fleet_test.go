// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package realkcp_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kcp-dev/logicalcluster/v3"
	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"

	"mcr.dev/core/fleet"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/kcp"
)

// TestFleetList lists Widgets across the fleet: three engaged consumers and a fourth whose
// binding the provider's IsReady refuses, so that its Widgets are in the endpoint's shared
// cache but its logical cluster is not engaged. Every consumer has the Widgets "one" (label
// team=x, spec.color red) and "two" (team=y, blue), the same names in every logical cluster.
// The fleet's List returns exactly the engaged consumers' Widgets, sorted and tagged with their
// logical cluster, honors a label selector, a field selector on an index added with
// IndexField and InClusters; ListByCluster groups them; a type the endpoint does not serve
// fails with an error naming the endpoint; and deleting a binding takes its consumer's Widgets
// out of the list.
func TestFleetList(t *testing.T) {
	provider := newExport(t)
	consumers := newConsumers(t, provider, 4)
	a, b, c, refused := consumers[0], consumers[1], consumers[2], consumers[3]
	for _, con := range consumers {
		con.createColoredWidget(t, "one", "x", "red")
		con.createColoredWidget(t, "two", "y", "blue")
	}

	logs := testLogs(t)
	opts := providerOptions(logs)
	opts.IsReady = func(ctx context.Context, obj client.Object) bool {
		return kcp.BindingReady(ctx, obj) && logicalcluster.From(obj) != refused.Cluster
	}
	p, err := kcp.New(server.WorkspaceConfig(provider.Path), exportName, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.IndexField(t.Context(), newWidget(""), "spec.color", widgetColor); err != nil {
		t.Fatal(err)
	}
	run := providertest.Start(t, p, waitTimeout)
	engaged := map[multicluster.ClusterName]*providertest.Engagement{}
	for _, con := range []consumer{a, b, c} {
		engaged[con.name()] = run.Recorder.WaitEngaged(t, p, con.name(), waitTimeout)
	}
	reader := p.Fleet()

	all := fleetKeys([]consumer{a, b, c}, "one", "two")
	eventually(t, "the fleet lists the engaged consumers' Widgets", func() error {
		return expectFleetWidgets(t.Context(), reader, all)
	})
	if run.Recorder.Count(refused.name()) != 0 {
		t.Fatalf("%s was engaged although IsReady refuses it", refused.name())
	}
	for _, check := range []struct {
		what string
		opts []client.ListOption
		want []string
	}{
		{"label team=x", []client.ListOption{client.MatchingLabels{"team": "x"}}, fleetKeys([]consumer{a, b, c}, "one")},
		{"field spec.color=blue", []client.ListOption{client.MatchingFields{"spec.color": "blue"}}, fleetKeys([]consumer{a, b, c}, "two")},
		{"field spec.color=red and label team=y", []client.ListOption{client.MatchingFields{"spec.color": "red"}, client.MatchingLabels{"team": "y"}}, nil},
		{"clusters a and the refused one", []client.ListOption{fleet.InClusters{a.name(), refused.name()}}, fleetKeys([]consumer{a}, "one", "two")},
		{"clusters b and c, field spec.color=red", []client.ListOption{fleet.InClusters{c.name(), b.name()}, client.MatchingFields{"spec.color": "red"}}, fleetKeys([]consumer{b, c}, "one")},
		{"limit 4", []client.ListOption{client.Limit(4)}, all[:4]},
	} {
		if err := expectFleetWidgets(t.Context(), reader, check.want, check.opts...); err != nil {
			t.Errorf("%s: %v", check.what, err)
		}
	}

	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(widgetGVK.GroupVersion().WithKind(widgetGVK.Kind + "List"))
	byCluster, err := fleet.ListByCluster[*unstructured.Unstructured](t.Context(), reader, list)
	if err != nil {
		t.Fatalf("ListByCluster: %v", err)
	}
	if len(byCluster) != 3 {
		t.Errorf("ListByCluster returned %d logical clusters, want %s, %s and %s", len(byCluster), a.name(), b.name(), c.name())
	}
	for _, con := range []consumer{a, b, c} {
		var names []string
		for _, w := range byCluster[con.name()] {
			names = append(names, w.GetName())
		}
		if !slices.Equal(names, []string{"one", "two"}) {
			t.Errorf("ListByCluster has %q for %s, want [one two]", names, con.name())
		}
	}

	// The export does not claim Secrets: the endpoint cannot list them, and says which it is.
	urls, err := server.EndpointURLs(t.Context(), provider.Path, exportName)
	if err != nil {
		t.Fatal(err)
	}
	secrets := &corev1.SecretList{}
	err = reader.List(t.Context(), secrets)
	if err == nil || len(urls) != 1 || !strings.Contains(err.Error(), "endpoint "+strings.TrimRight(urls[0], "/")) {
		t.Errorf("listing Secrets across the fleet: %v, want an error naming endpoint %q", err, urls)
	}
	if len(secrets.Items) != 0 {
		t.Errorf("listing Secrets across the fleet returned %d items", len(secrets.Items))
	}

	// A deleted binding disengages its consumer, whose Widgets leave the list.
	if err := server.DeleteBinding(t.Context(), a.Path, a.binding); err != nil {
		t.Fatal(err)
	}
	run.Recorder.WaitDisengaged(t, p, a.name(), engaged[a.name()], waitTimeout)
	eventually(t, "the fleet lists the Widgets of the consumers still engaged", func() error {
		return expectFleetWidgets(t.Context(), reader, fleetKeys([]consumer{b, c}, "one", "two"))
	})
}

// TestFleetEventHandler adds one event handler for Widgets across the fleet and checks that it
// hears, tagged with the right logical cluster and one call at a time: the Widgets the engaged
// consumers had before it was added (initial adds) and those created afterwards; nothing of a
// consumer once it is disengaged, by its IsReady turning false (its Widgets stay in the shared
// cache and a new one is created there) or by its binding being deleted; the Widgets of a
// consumer engaged again (initial adds of what it has, the one created meanwhile included) and
// of a consumer that binds later; and nothing once the registration is removed.
func TestFleetEventHandler(t *testing.T) {
	provider := newExport(t)
	consumers := newConsumers(t, provider, 3)
	a, b, c := consumers[0], consumers[1], consumers[2]
	for _, con := range consumers {
		con.createWidget(t, "before")
	}

	var refused sync.Map // logicalcluster.Name -> true: IsReady refuses its bindings
	logs := testLogs(t)
	opts := providerOptions(logs)
	opts.IsReady = func(ctx context.Context, obj client.Object) bool {
		_, no := refused.Load(logicalcluster.From(obj))
		return kcp.BindingReady(ctx, obj) && !no
	}
	p, err := kcp.New(server.WorkspaceConfig(provider.Path), exportName, opts)
	if err != nil {
		t.Fatal(err)
	}
	run := providertest.Start(t, p, waitTimeout)
	rec := run.Recorder
	engaged := map[multicluster.ClusterName]*providertest.Engagement{}
	for _, con := range consumers {
		engaged[con.name()] = rec.WaitEngaged(t, p, con.name(), waitTimeout)
	}
	// The fleet follows an engagement once the manager's Engage has returned: wait until all
	// three are listed, so that the handler's initial adds are complete.
	eventually(t, "the fleet lists the three consumers", func() error {
		return expectFleetWidgets(t.Context(), p.Fleet(), fleetKeys(consumers, "before"))
	})

	heard := &fleetEvents{}
	reg, err := p.Fleet().AddEventHandler(t.Context(), newWidget(""), heard.handler())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.Remove)
	for _, con := range consumers {
		heard.wait(t, 0, "add", con.name(), "before", initialAdd)
	}
	eventually(t, "the registration has synced", func() error {
		if !reg.HasSynced() {
			return fmt.Errorf("not synced")
		}
		return nil
	})
	for _, con := range consumers {
		con.createWidget(t, "after")
	}
	for _, con := range consumers {
		heard.wait(t, 0, "add", con.name(), "after", newAdd)
	}

	// a is disengaged, its Widgets stay: one created now is not heard of. b's marker, created
	// after it, comes through the same shared informer: once it is heard, a's Widget would have been.
	refused.Store(a.Cluster, true)
	a.touchBinding(t)
	rec.WaitDisengaged(t, p, a.name(), engaged[a.name()], waitTimeout)
	a.createWidget(t, "meanwhile")
	b.createWidget(t, "marker-1")
	mark1 := heard.wait(t, 0, "add", b.name(), "marker-1", newAdd)

	// c's binding is deleted: nothing more of c after its disengagement.
	if err := server.DeleteBinding(t.Context(), c.Path, c.binding); err != nil {
		t.Fatal(err)
	}
	rec.WaitDisengaged(t, p, c.name(), engaged[c.name()], waitTimeout)
	b.createWidget(t, "marker-2")
	mark2 := heard.wait(t, mark1, "add", b.name(), "marker-2", newAdd)

	// a is engaged again: the handler hears what a has, the Widget created meanwhile included.
	refused.Delete(a.Cluster)
	a.touchBinding(t)
	engaged[a.name()] = rec.WaitReengaged(t, p, a.name(), engaged[a.name()], waitTimeout)
	for _, name := range []string{"before", "after", "meanwhile"} {
		heard.wait(t, mark2, "add", a.name(), name, initialAdd)
	}

	// A consumer that binds now is heard of.
	d := newConsumers(t, provider, 1)[0]
	rec.WaitEngaged(t, p, d.name(), waitTimeout)
	d.createWidget(t, "late")
	heard.wait(t, mark2, "add", d.name(), "late", anyAdd)

	// Nothing after Remove: a second handler, added before, hears b's Widget; the first does not.
	second := &fleetEvents{}
	reg2, err := p.Fleet().AddEventHandler(t.Context(), newWidget(""), second.handler())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg2.Remove)
	second.wait(t, 0, "add", b.name(), "marker-2", initialAdd)
	reg.Remove()
	b.createWidget(t, "after-remove")
	second.wait(t, 0, "add", b.name(), "after-remove", newAdd)

	events := heard.snapshot()
	for i, e := range events {
		if e.cluster != e.annotated {
			t.Errorf("event %d (%s %s) is tagged %s, but the object is of %s", i, e.kind, e.name, e.cluster, e.annotated)
		}
		switch {
		case e.cluster == a.name() && e.name == "meanwhile" && i < mark2:
			t.Errorf("event %d: %s of a's Widget created while a was disengaged", i, e.kind)
		case e.cluster == a.name() && i > mark1 && i < mark2:
			t.Errorf("event %d: %s of a's %s after a was disengaged", i, e.kind, e.name)
		case e.cluster == c.name() && i > mark2:
			t.Errorf("event %d: %s of c's %s after c was disengaged", i, e.kind, e.name)
		case e.name == "after-remove":
			t.Errorf("event %d: %s of %s after the registration was removed", i, e.kind, e.name)
		}
	}
	if n := heard.concurrent.Load(); n > 0 {
		t.Errorf("the handler was called %d times while another call ran", n)
	}
	// Exactly these Widgets were announced by adds, each for its own logical cluster.
	var adds []string
	for _, e := range events {
		if e.kind == "add" {
			adds = append(adds, string(e.cluster)+"/"+e.name)
		}
	}
	slices.Sort(adds)
	adds = slices.Compact(adds)
	want := slices.Concat(
		fleetKeys([]consumer{a}, "after", "before", "meanwhile"),
		fleetKeys([]consumer{b}, "after", "before", "marker-1", "marker-2"),
		fleetKeys([]consumer{c}, "after", "before"),
		fleetKeys([]consumer{d}, "late"),
	)
	slices.Sort(want)
	if !slices.Equal(adds, want) {
		t.Errorf("the handler heard adds of %q, want %q", adds, want)
	}
}

// createColoredWidget creates a Widget with the label team and spec.color in the consumer
// workspace, as its user does.
func (c consumer) createColoredWidget(t *testing.T, name, team, color string) {
	t.Helper()
	eventually(t, "creating Widget "+name+" in "+c.Path.String(), func() error {
		w := newWidget(name)
		w.SetLabels(map[string]string{"team": team})
		if err := unstructured.SetNestedField(w.Object, color, "spec", "color"); err != nil {
			return err
		}
		return client.IgnoreAlreadyExists(c.adminClient(t).Create(t.Context(), w))
	})
}

var touches atomic.Int64

// touchBinding changes an annotation of the consumer's APIBinding, so that the provider reads
// its readiness again.
func (c consumer) touchBinding(t *testing.T) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"mcr.dev/touched":%q}}}`, strconv.FormatInt(touches.Add(1), 10))
	eventually(t, "annotating the APIBinding of "+c.Path.String(), func() error {
		b := &apisv1alpha1.APIBinding{ObjectMeta: metav1.ObjectMeta{Name: c.binding}}
		return c.adminClient(t).Patch(t.Context(), b, client.RawPatch(types.MergePatchType, []byte(patch)))
	})
}

// widgetColor is the extractor of the field index spec.color of Widgets.
func widgetColor(obj client.Object) []string {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil
	}
	color, _, _ := unstructured.NestedString(u.Object, "spec", "color")
	return []string{color}
}

// fleetKeys returns "<logical cluster>/<name>" for each of names in each consumer, sorted.
func fleetKeys(consumers []consumer, names ...string) []string {
	var keys []string
	for _, c := range consumers {
		for _, n := range names {
			keys = append(keys, string(c.name())+"/"+n)
		}
	}
	slices.Sort(keys)
	return keys
}

// expectFleetWidgets checks that the fleet lists exactly the Widgets want ("<logical
// cluster>/<name>"), in that order.
func expectFleetWidgets(ctx context.Context, reader *fleet.Reader, want []string, opts ...client.ListOption) error {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(widgetGVK.GroupVersion().WithKind(widgetGVK.Kind + "List"))
	if err := reader.List(ctx, list, opts...); err != nil {
		return err
	}
	var got []string
	for _, w := range list.Items {
		if w.GroupVersionKind() != widgetGVK {
			return fmt.Errorf("listed %s %s", w.GroupVersionKind(), w.GetName())
		}
		got = append(got, logicalcluster.From(&w).String()+"/"+w.GetName())
	}
	if !slices.Equal(got, want) {
		return fmt.Errorf("listed %q, want %q", got, want)
	}
	return nil
}

// fleetEvent is one call of a FleetHandler.
type fleetEvent struct {
	kind    string // add, update or delete
	cluster multicluster.ClusterName
	name    string
	initial bool
	// annotated is the object's own logical cluster (kcp.io/cluster).
	annotated multicluster.ClusterName
}

// fleetEvents records the calls of a FleetHandler in order.
type fleetEvents struct {
	mu         sync.Mutex
	events     []fleetEvent
	running    atomic.Int32
	concurrent atomic.Int32
}

func (f *fleetEvents) handler() fleet.Handler {
	record := func(kind string, cluster multicluster.ClusterName, obj client.Object, initial bool) {
		if f.running.Add(1) > 1 {
			f.concurrent.Add(1)
		}
		defer f.running.Add(-1)
		f.mu.Lock()
		defer f.mu.Unlock()
		f.events = append(f.events, fleetEvent{
			kind: kind, cluster: cluster, name: obj.GetName(), initial: initial,
			annotated: multicluster.ClusterName(logicalcluster.From(obj)),
		})
	}
	return fleet.HandlerFuncs{
		AddFunc: func(cluster multicluster.ClusterName, obj client.Object, initial bool) {
			record("add", cluster, obj, initial)
		},
		UpdateFunc: func(cluster multicluster.ClusterName, _, obj client.Object) {
			record("update", cluster, obj, false)
		},
		DeleteFunc: func(cluster multicluster.ClusterName, obj client.Object) {
			record("delete", cluster, obj, false)
		},
	}
}

func (f *fleetEvents) snapshot() []fleetEvent {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.events)
}

// Which adds wait accepts.
const (
	anyAdd = iota
	initialAdd
	newAdd
)

// wait waits until the handler heard, as its event from on or later, of the Widget name of
// cluster (an event of kind, an add of the given sort for adds) and returns the event's index.
func (f *fleetEvents) wait(t *testing.T, from int, kind string, cluster multicluster.ClusterName, name string, sort int) int {
	t.Helper()
	i := -1
	eventually(t, fmt.Sprintf("the handler hears %s of %s/%s", kind, cluster, name), func() error {
		events := f.snapshot()
		for j := max(from, 0); j < len(events); j++ {
			e := events[j]
			if e.kind == kind && e.cluster == cluster && e.name == name && (sort == anyAdd || e.initial == (sort == initialAdd)) {
				i = j
				return nil
			}
		}
		return fmt.Errorf("not among events %d to %d", from, len(events))
	})
	return i
}
