// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kcp

import (
	"context"
	"slices"
	"testing"

	"github.com/kcp-dev/logicalcluster/v3"

	"mcr.dev/core/providers/kit"
)

// TestFleetHubFollowsEngagements checks the bookkeeping of the fleet-wide reads without a
// server: an engagement counts until its context ends; a newer engagement of the same logical
// cluster (through another endpoint) replaces the older, whose end then changes nothing; the
// members are grouped by endpoint in URL order and by name, and InClusters narrows them.
func TestFleetHubFollowsEngagements(t *testing.T) {
	east, west := &endpoint{url: "https://east"}, &endpoint{url: "https://west"}
	view := func(name string, ep *endpoint) *scopedCluster {
		return &scopedCluster{name: logicalcluster.Name(name), endpoint: ep}
	}
	var h fleetHub
	engage := func(v *scopedCluster) context.CancelFunc {
		ctx, cancel := context.WithCancel(context.Background())
		h.engaged(ctx, v)
		return cancel
	}
	// The hub's disengagements run in context.AfterFunc goroutines.
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		if !kit.WaitFor(t.Context(), cond) {
			t.Fatalf("%s: not reached", what)
		}
	}
	known := func() int {
		h.mu.RLock()
		defer h.mu.RUnlock()
		return len(h.members)
	}
	groups := func(only ...string) []string {
		var in map[logicalcluster.Name]bool
		if only != nil {
			in = map[logicalcluster.Name]bool{}
			for _, n := range only {
				in[logicalcluster.Name(n)] = true
			}
		}
		var got []string
		for _, g := range h.byEndpoint(in) {
			for _, m := range g.members {
				got = append(got, g.endpoint.url+"/"+m.name.String())
			}
		}
		return got
	}

	stopB := engage(view("b", west))
	stopA := engage(view("a", west))
	stopC := engage(view("c", east))
	if got, want := groups(), []string{"https://east/c", "https://west/a", "https://west/b"}; !slices.Equal(got, want) {
		t.Errorf("members %q, want %q", got, want)
	}
	if got, want := groups("a", "c", "unknown"), []string{"https://east/c", "https://west/a"}; !slices.Equal(got, want) {
		t.Errorf("members in a, c and unknown: %q, want %q", got, want)
	}
	if got := groups([]string{}...); len(got) != 0 {
		t.Errorf("members in no cluster: %q", got)
	}
	if !h.serves(west, "a") || h.serves(east, "a") || h.serves(west, "c") {
		t.Error("serves does not follow the endpoints of the engagements")
	}

	// a moves to east: the new engagement comes first, then the old one ends.
	stopA2 := engage(view("a", east))
	if !h.serves(east, "a") || h.serves(west, "a") {
		t.Error("a is not served by east alone once engaged there")
	}
	stopA()
	if got, want := groups(), []string{"https://east/a", "https://east/c", "https://west/b"}; !slices.Equal(got, want) {
		t.Errorf("after a moved: members %q, want %q", got, want)
	}

	// Ending an engagement takes its member out at once (its context is checked), and out of the
	// map soon after.
	stopB()
	if h.serves(west, "b") || slices.Contains(groups(), "https://west/b") {
		t.Error("b still counts once its engagement ended")
	}
	waitFor("b forgotten", func() bool { return len(h.membersOn(west)) == 0 && known() == 2 })
	stopA2()
	stopC()
	waitFor("every member forgotten", func() bool { return len(groups()) == 0 && known() == 0 })
}
