// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package fleet

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/kcp-dev/logicalcluster/v3"

	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/kcp/internal/cache"
)

// TestBackendFollowsEngagements checks the bookkeeping of the fleet-wide reads without a
// server: an engagement counts until its context ends; a newer engagement of the same logical
// cluster (through another endpoint) replaces the older, whose end then changes nothing; the
// members are grouped by endpoint in URL order and by name, and InClusters narrows them.
func TestBackendFollowsEngagements(t *testing.T) {
	// Caches that are never started: the bookkeeping only tells endpoints apart and orders them
	// by URL.
	endpoint := func(url string) *cache.Wildcard {
		wc, err := cache.NewWildcard(&rest.Config{Host: url}, runtime.NewScheme(), nil)
		if err != nil {
			t.Fatalf("creating the cache of %s: %v", url, err)
		}
		return wc
	}
	east, west := endpoint("https://east"), endpoint("https://west")
	view := func(name string, shared *cache.Wildcard) *member {
		return &member{name: logicalcluster.Name(name), shared: shared}
	}
	h := New(logr.Discard(), time.Minute)
	engage := func(m *member) context.CancelFunc {
		ctx, cancel := context.WithCancel(context.Background())
		m.ctx = ctx
		h.engaged(m)
		return cancel
	}
	// The hub's disengagements run in context.AfterFunc goroutines.
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		providertest.Eventually(t, time.Minute, what, func() error {
			if !cond() {
				return errors.New("not yet")
			}
			return nil
		})
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
				got = append(got, g.shared.URL()+"/"+m.name.String())
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
