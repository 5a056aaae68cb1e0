// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kit_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/clusters"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
)

// runEngine runs an engine whose Sync counts keys, with the given sources, until the test ends.
func runEngine(t *testing.T, sources ...func(*kit.Engine[string]) kit.Source[string]) (*kit.Engine[string], *names) {
	t.Helper()
	seen := &names{set: map[string]int{}}
	var set clusters.Clusters[cluster.Cluster]
	var e *kit.Engine[string]
	var srcs []kit.Source[string]
	e, err := kit.NewEngine(kit.EngineOptions[string]{
		Name:     "test-provider",
		Clusters: &set,
		Sync:     seen.sync,
		Sources:  []kit.Source[string]{lazySources{&srcs}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sources {
		srcs = append(srcs, s(e))
	}
	providertest.Start(t, providerFunc(e.Run), time.Minute)
	return e, seen
}

// lazySources starts sources built after the engine (they need it to queue keys).
type lazySources struct{ srcs *[]kit.Source[string] }

func (l lazySources) Start(ctx context.Context, e *kit.Engine[string]) (func(), error) {
	var stops []func()
	for _, s := range *l.srcs {
		stop, err := s.Start(ctx, e)
		if err != nil {
			for _, st := range stops {
				st()
			}
			return nil, err
		}
		stops = append(stops, stop)
	}
	return func() {
		for _, st := range stops {
			st()
		}
	}, nil
}

func TestFilesScansOnChangeAndQueuesWhatChanged(t *testing.T) {
	dir := t.TempDir()
	var scans atomic.Int32
	var desired kit.Desired[string, string]
	desired.Equal = func(a, b string) bool { return a == b }
	_, seen := runEngine(t, func(e *kit.Engine[string]) kit.Source[string] {
		return kit.Files[string]{
			Debounce:     10 * time.Millisecond,
			PollInterval: time.Hour, // only events can cause the scans below
			Scan: func(context.Context) []string {
				scans.Add(1)
				all := map[string]string{}
				entries, _ := os.ReadDir(dir)
				for _, entry := range entries {
					data, _ := os.ReadFile(filepath.Join(dir, entry.Name()))
					all[entry.Name()] = string(data)
				}
				for _, key := range desired.Replace(all) {
					e.Add(key)
				}
				return []string{dir}
			},
		}
	})
	// Each write replaces the file whole (written beside, renamed in): a scan that ran between
	// os.WriteFile's create and its write would see an empty "a", a change of its own.
	staging := t.TempDir()
	write := func(name, content string) {
		tmp := filepath.Join(staging, name)
		if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	write("a", "1")
	providertest.Eventually(t, time.Minute, "a synced after it was written", func() error {
		if seen.count("a") != 1 {
			return fmt.Errorf("a synced %d times", seen.count("a"))
		}
		return nil
	})
	// Touching without change scans but queues nothing; a change queues again.
	before := scans.Load()
	write("a", "1")
	write("b", "1")
	providertest.Eventually(t, time.Minute, "b synced", func() error {
		if seen.count("b") != 1 {
			return fmt.Errorf("b synced %d times", seen.count("b"))
		}
		return nil
	})
	if scans.Load() == before {
		t.Error("no scan after the files changed")
	}
	if n := seen.count("a"); n != 1 {
		t.Errorf("a synced %d times although its content did not change", n)
	}
	if err := os.Remove(filepath.Join(dir, "a")); err != nil {
		t.Fatal(err)
	}
	providertest.Eventually(t, time.Minute, "a synced after it was removed", func() error {
		if seen.count("a") != 2 {
			return fmt.Errorf("a synced %d times", seen.count("a"))
		}
		return nil
	})
}

func TestFilesPollsWithoutEvents(t *testing.T) {
	var scans atomic.Int32
	runEngine(t, func(*kit.Engine[string]) kit.Source[string] {
		return kit.Files[string]{
			PollInterval: 20 * time.Millisecond,
			// Nothing to watch: only the poll can cause more scans.
			Scan: func(context.Context) []string { scans.Add(1); return nil },
		}
	})
	providertest.Eventually(t, time.Minute, "several scans by polling", func() error {
		if n := scans.Load(); n < 3 {
			return fmt.Errorf("%d scans", n)
		}
		return nil
	})
}

func TestPollListsAtStartAndEveryInterval(t *testing.T) {
	var lists atomic.Int32
	_, seen := runEngine(t, func(e *kit.Engine[string]) kit.Source[string] {
		return kit.Poll[string]{
			Interval: 20 * time.Millisecond,
			List: func(context.Context) error {
				if lists.Add(1) == 1 {
					e.Add("first")
				}
				return nil
			},
		}
	})
	providertest.Eventually(t, time.Minute, "the first list synced and listed again", func() error {
		if n := lists.Load(); n < 3 || seen.count("first") != 1 {
			return fmt.Errorf("%d lists, first synced %d times", n, seen.count("first"))
		}
		return nil
	})
}

func TestDesiredReportsChanges(t *testing.T) {
	var d kit.Desired[string, int]
	d.Equal = func(a, b int) bool { return a == b }
	sorted := func(keys []string) []string { slices.Sort(keys); return keys }

	if got := sorted(d.Replace(map[string]int{"a": 1, "b": 2})); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("first Replace changed %v", got)
	}
	if got := sorted(d.Replace(map[string]int{"a": 1, "b": 3, "c": 4})); !slices.Equal(got, []string{"b", "c"}) {
		t.Errorf("second Replace changed %v, want b (new value) and c (new key)", got)
	}
	if got := sorted(d.Replace(map[string]int{"c": 4})); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("third Replace changed %v, want the keys that went away", got)
	}
	if v, ok := d.Get("c"); !ok || v != 4 {
		t.Errorf("Get(c) = %v, %v", v, ok)
	}
	if d.Set("c", 4) || !d.Set("c", 5) || !d.Set("d", 1) {
		t.Error("Set reported changes wrongly")
	}
	if !d.Delete("d") || d.Delete("d") {
		t.Error("Delete reported presence wrongly")
	}
	if got := sorted(d.Keys()); !slices.Equal(got, []string{"c"}) {
		t.Errorf("Keys = %v", got)
	}
}
