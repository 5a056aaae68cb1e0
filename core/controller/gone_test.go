// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package controller_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mccontroller "mcr.dev/core/controller"
	"mcr.dev/core/envtest"
	mchandler "mcr.dev/core/handler"
	"mcr.dev/core/internal/testcheck"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/providers/providertest"
	mcsource "mcr.dev/core/source"
)

// TestKindDeletedWhileWatchedIsParked runs a controller that watches a CRD's Widgets, with a
// field index on them, over two members that both serve the CRD. The CRD is deleted in "b"
// while watched: the source and the index are parked there as for a kind never served (log
// line, gauge, debug page), the kind's informer is removed (b gets no more list or watch
// requests for Widgets) and nothing is retried as an error. Member "a" keeps reconciling
// throughout. Once the CRD is back in "b", its new Widgets are watched, reconciled and indexed.
func TestKindDeletedWhileWatchedIsParked(t *testing.T) {
	group := fmt.Sprintf("gone%d.mcr.dev", time.Now().UnixNano()%1_000_000)
	gvk := schema.GroupVersionKind{Group: group, Version: "v1", Kind: "Widget"}
	installWidgets(t, "a", gvk)
	installWidgets(t, "b", gvk)
	ns := namespace(t, "a", "b")
	createWidget(t, "a", gvk, ns, "widget-a", "blue")
	createWidget(t, "b", gvk, ns, "widget-b", "blue")

	// Counts b's requests for Widgets (the informer's lists and watches).
	var widgetRequests atomic.Int64
	bConfig := rest.CopyConfig(fleet.Member("b").Config())
	bConfig.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			if strings.HasPrefix(r.URL.Path, "/apis/"+group+"/v1/") {
				widgetRequests.Add(1)
			}
			return rt.RoundTrip(r)
		})
	})
	provider := newFixedProvider(t, map[string]*rest.Config{"a": fleet.Member("a").Config(), "b": bConfig})
	mgr := newManager(t, provider)
	if err := mgr.GetFieldIndexer().IndexField(t.Context(), widget(gvk), "spec.color", func(o client.Object) []string {
		color, _, _ := unstructured.NestedString(o.(*unstructured.Unstructured).Object, "spec", "color")
		return []string{color}
	}); err != nil {
		t.Fatal(err)
	}
	name := "gone-" + ns
	logs := &providertest.LogBuffer{}
	rec := newRecorder(ns)
	c, err := mccontroller.New(name, mgr, mccontroller.Options{Reconciler: rec, Logger: logs.Logger()}, mccontroller.WithParkedRetryMax(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.MultiClusterWatch(mcsource.Kind(widget(gvk), mchandler.TypedEnqueueRequestForObject[*unstructured.Unstructured]())); err != nil {
		t.Fatal(err)
	}
	parkedIndexesBefore := parkedIndexes(t)
	runManager(t, mgr)
	rec.waitFor(t, "a", "widget-a")
	rec.waitFor(t, "b", "widget-b")
	testcheck.WaitFor(t, "b's Widget found through the field index", func() bool { return indexed(t, mgr, "b", gvk, ns, "blue") == 1 })

	// The CRD goes away in b while watched.
	if err := memberClient(t, "b").Delete(t.Context(), envtest.SchemalessCRD(gvk, "widgets")); err != nil {
		t.Fatal(err)
	}
	testcheck.WaitFor(t, "the Widget source and index parked on b", func() bool { return len(debugCluster(mustDebug(t, mgr), "b").Parked) == 2 })
	wantParked := []string{name + ": kind source: *unstructured.Unstructured", "field index spec.color of v1 Widget." + group}
	if got := debugCluster(mustDebug(t, mgr), "b").Parked; fmt.Sprint(got) != fmt.Sprint(wantParked) {
		t.Fatalf("b parked %q, want %q", got, wantParked)
	}
	if v := parkedSources(t, name); v != 1 {
		t.Fatalf("mcr_parked_sources{controller=%q} = %v, want 1", name, v)
	}
	if v := parkedIndexes(t); v != parkedIndexesBefore+1 {
		t.Fatalf("mcr_parked_field_indexes = %v, want %v", v, parkedIndexesBefore+1)
	}
	// No informer lists the kind any more: b gets no request for Widgets while it is parked
	// (the parked retries ask discovery, /apis/<group>/v1, not the resource).
	time.Sleep(2 * time.Second) // let a removed informer's last request finish
	before := widgetRequests.Load()
	time.Sleep(5 * time.Second) // several retries at WithParkedRetryMax, and client-go backoffs
	if after := widgetRequests.Load(); after != before {
		t.Fatalf("b got %d requests for Widgets while the kind was parked: its informer still runs", after-before)
	}
	if n := len(logs.All(`"msg"="Cluster does not serve the kind of this source; watch parked until it does"`, `"cluster"="b"`)); n != 1 {
		t.Fatalf("the parked source was reported %d times, want once:\n%s", n, logs)
	}
	if logged(logs, `"msg"="Cannot watch cluster, will retry"`) || logged(logs, `"cluster"="a"`, `"msg"="Cluster does not serve`) {
		t.Fatalf("a kind that went away was retried as an error, or a was parked:\n%s", logs)
	}
	// a, which keeps the CRD, keeps working.
	createWidget(t, "a", gvk, ns, "widget-a2", "green")
	rec.waitFor(t, "a", "widget-a2")
	testcheck.WaitFor(t, "a's new Widget found through the field index", func() bool { return indexed(t, mgr, "a", gvk, ns, "green") == 1 })

	// The CRD returns in b: the source and the index resume.
	installWidgets(t, "b", gvk)
	createWidget(t, "b", gvk, ns, "widget-b2", "red")
	rec.waitFor(t, "b", "widget-b2")
	testcheck.WaitFor(t, "b's new Widget found through the field index", func() bool { return indexed(t, mgr, "b", gvk, ns, "red") == 1 })
	testcheck.WaitFor(t, "nothing parked any more", func() bool {
		return len(debugCluster(mustDebug(t, mgr), "b").Parked) == 0 &&
			parkedSources(t, name) == 0 &&
			parkedIndexes(t) == parkedIndexesBefore
	})
	if notLogged(logs, `"msg"="Cluster now serves the kind of this source; watch started"`, `"cluster"="b"`) {
		t.Fatalf("the resumed source was not reported:\n%s", logs)
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestLocalIndexOnKindNotServedIsParked indexes a kind the manager's local cluster (engaged as
// a member) does not serve: IndexField does not fail, the index is parked there (gauge, debug
// page) and applied once the host serves the kind.
func TestLocalIndexOnKindNotServedIsParked(t *testing.T) {
	group := fmt.Sprintf("local%d.mcr.dev", time.Now().UnixNano()%1_000_000)
	gvk := schema.GroupVersionKind{Group: group, Version: "v1", Kind: "Widget"}
	ns := namespace(t, "host")
	parkedIndexesBefore := parkedIndexes(t)
	mgr := newManager(t, nil) // engages the local cluster
	if err := mgr.GetFieldIndexer().IndexField(t.Context(), widget(gvk), "spec.color", func(o client.Object) []string {
		color, _, _ := unstructured.NestedString(o.(*unstructured.Unstructured).Object, "spec", "color")
		return []string{color}
	}); err != nil {
		t.Fatalf("IndexField must not fail for a local cluster that does not serve the kind: %v", err)
	}
	runManager(t, mgr)
	want := []string{"field index spec.color of v1 Widget." + group}
	testcheck.WaitFor(t, "the index parked on the local cluster", func() bool {
		return fmt.Sprint(debugCluster(mustDebug(t, mgr), mcmanager.LocalCluster).Parked) == fmt.Sprint(want)
	})
	if v := parkedIndexes(t); v != parkedIndexesBefore+1 {
		t.Fatalf("mcr_parked_field_indexes = %v, want %v", v, parkedIndexesBefore+1)
	}

	installWidgets(t, "host", gvk)
	createWidget(t, "host", gvk, ns, "widget-host", "blue")
	testcheck.WaitFor(t, "the host's Widget found through the field index", func() bool {
		return indexed(t, mgr, mcmanager.LocalCluster, gvk, ns, "blue") == 1
	})
	testcheck.WaitFor(t, "nothing parked any more", func() bool {
		return len(debugCluster(mustDebug(t, mgr), mcmanager.LocalCluster).Parked) == 0 && parkedIndexes(t) == parkedIndexesBefore
	})
}
