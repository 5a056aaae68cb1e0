// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package manager_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
)

// debugProbe is an Aware that reports a fixed ControllerDebug.
type debugProbe struct {
	*probe
	state mcmanager.ControllerDebug
}

func (p *debugProbe) DebugState() mcmanager.ControllerDebug { return p.state }

// TestFleetDebugAggregates checks how the endpoint folds the controllers' reports into each
// cluster's row, and the text and JSON answers, without API servers; TestFleetDebugEndpoint in
// package controller runs it with real controllers and members.
func TestFleetDebugAggregates(t *testing.T) {
	p := &statusProvider{}
	p.set(multicluster.FleetStatus{Listed: false, Failing: map[multicluster.ClusterName]string{"broken": "Unauthorized: the member refused the credentials"}})
	mgr := newManager(t, p)
	two, three := 2, 3
	reporters := []*debugProbe{
		{probe: newProbe(nil), state: mcmanager.ControllerDebug{Name: "first", Running: true, QueueDepth: 5, Clusters: []mcmanager.ControllerCluster{
			{Name: "a", Synced: true, QueueDepth: &two, Breaker: "closed"},
			{Name: "b", Synced: true, QueueDepth: &three, Breaker: "open"},
		}}},
		{probe: newProbe(nil), state: mcmanager.ControllerDebug{Name: "second", Running: true, QueueDepth: 1, Clusters: []mcmanager.ControllerCluster{
			{Name: "a", Synced: false, QueueDepth: &three, Breaker: "closed", Sources: []mcmanager.SourceDebug{{Source: "kind source: *v1.Secret"}}},
		}}},
		// Not running: it does not count for sync.
		{probe: newProbe(nil), state: mcmanager.ControllerDebug{Name: "standby", QueueDepth: -1}},
	}
	for _, r := range reporters {
		if err := mgr.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []multicluster.ClusterName{"a", "b"} {
		if err := mgr.Engage(context.Background(), name, newCluster(t)); err != nil {
			t.Fatal(err)
		}
	}

	d, err := mcmanager.DebugFleet(mgr)
	if err != nil {
		t.Fatal(err)
	}
	if d.Listed || len(d.Clusters) != 3 || len(d.Controllers) != 3 {
		t.Fatalf("DebugFleet = %+v, want not listed, three clusters and three controllers", d)
	}
	a, b, broken := d.Clusters[0], d.Clusters[1], d.Clusters[2]
	if a.Name != "a" || a.Synced || strings.Join(a.Unsynced, ",") != "second" || a.QueueDepth == nil || *a.QueueDepth != 5 || a.Breakers["first"] != "closed" {
		t.Errorf("cluster a = %+v, want unsynced by second, queue 5, breakers closed", a)
	}
	if b.Name != "b" || b.Synced || strings.Join(b.Unsynced, ",") != "second" || *b.QueueDepth != 3 || b.Breakers["first"] != "open" {
		t.Errorf("cluster b = %+v, want unsynced by second (not engaged there), queue 3, first's breaker open", b)
	}
	if broken.Name != "broken" || broken.State != mcmanager.ClusterFailing || broken.EngagedSince != nil || !strings.HasPrefix(broken.LastError, "Unauthorized") {
		t.Errorf("cluster broken = %+v, want failing as Unauthorized", broken)
	}

	h, err := mcmanager.FleetDebugHandler(mgr)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/debug/fleet?format=text", nil))
	text := rec.Body.String()
	for _, want := range []string{"NOT LISTED YET", "closed", "first:open", "a: kind source: *v1.Secret", "Unauthorized: the member refused the credentials"} {
		if !strings.Contains(text, want) {
			t.Errorf("text answer lacks %q:\n%s", want, text)
		}
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/debug/fleet", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST answered %d, want 405", rec.Code)
	}
	var buf bytes.Buffer
	if err := d.WriteText(&buf); err != nil || buf.Len() == 0 {
		t.Errorf("WriteText: %v", err)
	}
}
