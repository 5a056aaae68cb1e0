// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package controller_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mccontroller "mcr.dev/core/controller"
	"mcr.dev/core/envtest"
	mchandler "mcr.dev/core/handler"
	"mcr.dev/core/internal/testcheck"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/metrics"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/providertest"
	mcsource "mcr.dev/core/source"
)

// TestKindNotServedIsParked runs a controller that watches ConfigMaps and a CRD's Widgets, with
// a field index on Widgets, over two members of which only "a" serves the CRD at first. Member
// "b" is engaged all the same and its ConfigMaps are reconciled; the Widget source and index are
// parked there, reported once (log, gauges, the fleet debug endpoint) and count as synced for
// readiness. Once the CRD is installed in "b", its Widgets are watched, reconciled and indexed
// there without re-engaging it.
func TestKindNotServedIsParked(t *testing.T) {
	group := fmt.Sprintf("parked%d.mcr.dev", time.Now().UnixNano()%1_000_000)
	gvk := schema.GroupVersionKind{Group: group, Version: "v1", Kind: "Widget"}
	installWidgets(t, "a", gvk)
	ns := namespace(t, "a", "b")
	createWidget(t, "a", gvk, ns, "widget-a", "blue") // a serves the kind from here on

	provider := newFixedProvider(t, map[string]*rest.Config{"a": fleet.Member("a").Config(), "b": fleet.Member("b").Config()})
	mgr := newManager(t, provider)
	if err := mgr.GetFieldIndexer().IndexField(t.Context(), widget(gvk), "spec.color", func(o client.Object) []string {
		color, _, _ := unstructured.NestedString(o.(*unstructured.Unstructured).Object, "spec", "color")
		return []string{color}
	}); err != nil {
		t.Fatal(err)
	}
	name := "parked-" + ns
	logs := &providertest.LogBuffer{}
	rec := newRecorder(ns)
	c, err := mccontroller.New(name, mgr, mccontroller.Options{Reconciler: rec, Logger: logs.Logger()}, mccontroller.WithParkedRetryMax(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.MultiClusterWatch(configMaps()); err != nil {
		t.Fatal(err)
	}
	if err := c.MultiClusterWatch(mcsource.Kind(widget(gvk), mchandler.TypedEnqueueRequestForObject[*unstructured.Unstructured]())); err != nil {
		t.Fatal(err)
	}
	parkedIndexesBefore := parkedIndexes(t)
	runManager(t, mgr)

	// b is engaged without the kind: its ConfigMaps are reconciled, a's Widgets too.
	createConfigMap(t, "b", ns, "cm-b")
	rec.waitFor(t, "b", "cm-b")
	rec.waitFor(t, "a", "widget-a")
	testcheck.WaitFor(t, "a's Widget found through the field index", func() bool { return indexed(t, mgr, "a", gvk, ns, "blue") == 1 })

	// Parked, and said so once, however often it is retried meanwhile.
	testcheck.WaitFor(t, "the Widget source and index parked on b", func() bool { return len(debugCluster(mustDebug(t, mgr), "b").Parked) == 2 })
	d := mustDebug(t, mgr)
	wantParked := []string{name + ": kind source: *unstructured.Unstructured", "field index spec.color of v1 Widget." + group}
	if got := debugCluster(d, "b").Parked; !slices.Equal(got, wantParked) {
		t.Fatalf("b parked %q, want %q", got, wantParked)
	}
	if got := debugCluster(d, "a").Parked; len(got) != 0 {
		t.Fatalf("a, which serves the kind, has parked %q", got)
	}
	if v := parkedSources(t, name); v != 1 {
		t.Fatalf("mcr_parked_sources{controller=%q} = %v, want 1", name, v)
	}
	if v := parkedIndexes(t); v != parkedIndexesBefore+1 {
		t.Fatalf("mcr_parked_field_indexes = %v, want %v", v, parkedIndexesBefore+1)
	}
	// A parked source counts as synced: the fleet becomes ready while it is parked.
	ready := mcmanager.FleetReadyCheck(mgr, mcmanager.ReadyCheckOptions{})
	testcheck.WaitFor(t, "the fleet ready while b's Widget source is parked", func() bool { return ready(nil) == nil })
	if got := debugCluster(mustDebug(t, mgr), "b").Parked; len(got) != 2 {
		t.Fatalf("b parked %q when the fleet was ready", got)
	}
	time.Sleep(4 * time.Second) // several retries at WithParkedRetryMax
	if n := len(logs.All(`"msg"="Cluster does not serve the kind of this source; watch parked until it does"`, `"cluster"="b"`)); n != 1 {
		t.Fatalf("the parked source was reported %d times, want once:\n%s", n, logs)
	}
	if logged(logs, `"msg"="Cannot watch cluster, will retry"`) {
		t.Fatalf("a kind the cluster does not serve was retried as an error:\n%s", logs)
	}

	// The CRD arrives in b: its Widgets are watched, reconciled and indexed there.
	installWidgets(t, "b", gvk)
	createWidget(t, "b", gvk, ns, "widget-b", "blue")
	rec.waitFor(t, "b", "widget-b")
	testcheck.WaitFor(t, "b's Widget found through the field index", func() bool { return indexed(t, mgr, "b", gvk, ns, "blue") == 1 })
	testcheck.WaitFor(t, "nothing parked any more", func() bool {
		return len(debugCluster(mustDebug(t, mgr), "b").Parked) == 0 &&
			parkedSources(t, name) == 0 &&
			parkedIndexes(t) == parkedIndexesBefore
	})
	if notLogged(logs, `"msg"="Cluster now serves the kind of this source; watch started"`, `"cluster"="b"`) {
		t.Fatalf("the start of the parked source was not reported:\n%s", logs)
	}
}

func widget(gvk schema.GroupVersionKind) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u
}

// installWidgets installs a namespaced CRD of kind Widget (plural widgets) in the member.
func installWidgets(t *testing.T, member string, gvk schema.GroupVersionKind) {
	t.Helper()
	crd := envtest.SchemalessCRD(gvk, "widgets")
	if err := memberClient(t, member).Create(t.Context(), crd); err != nil {
		t.Fatalf("installing the Widget CRD in %s: %v", member, err)
	}
}

// createWidget creates a Widget, retrying while its CRD is being established.
func createWidget(t *testing.T, member string, gvk schema.GroupVersionKind, ns, name, color string) {
	t.Helper()
	testcheck.WaitFor(t, "creating Widget "+name+" in "+member, func() bool {
		w := widget(gvk)
		w.SetNamespace(ns)
		w.SetName(name)
		w.Object["spec"] = map[string]any{"color": color}
		// A fresh client each time: its REST mapper must not remember that the kind was not
		// served.
		return memberClient(t, member).Create(t.Context(), w) == nil
	})
}

// indexed returns how many Widgets of ns the member's cache finds through the field index
// (-1 while the index or the informer is not there).
func indexed(t *testing.T, mgr mcmanager.Manager, member multicluster.ClusterName, gvk schema.GroupVersionKind, ns, color string) int {
	t.Helper()
	cl, err := mgr.GetCluster(t.Context(), member)
	if err != nil {
		return -1
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := cl.GetCache().List(ctx, list, client.InNamespace(ns), client.MatchingFields{"spec.color": color}); err != nil {
		return -1
	}
	return len(list.Items)
}

func mustDebug(t *testing.T, mgr mcmanager.Manager) mcmanager.FleetDebug {
	t.Helper()
	d, err := mcmanager.DebugFleet(mgr)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func debugCluster(d mcmanager.FleetDebug, name multicluster.ClusterName) mcmanager.FleetCluster {
	for _, c := range d.Clusters {
		if c.Name == name {
			return c
		}
	}
	return mcmanager.FleetCluster{}
}

// parkedSources reads mcr_parked_sources of the controller.
func parkedSources(t *testing.T, controller string) float64 {
	t.Helper()
	var m dto.Metric
	if err := metrics.ParkedSources.WithLabelValues(controller).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetGauge().GetValue()
}

// parkedIndexes reads mcr_parked_field_indexes.
func parkedIndexes(t *testing.T) float64 {
	t.Helper()
	var m dto.Metric
	if err := metrics.ParkedFieldIndexes.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetGauge().GetValue()
}
