// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kit_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"mcr.dev/core/providers/kit"
)

// syncs counts the syncs of each key and signals each one.
type syncs struct {
	mu     sync.Mutex
	counts map[string]int
	seen   chan string
}

func newSyncs() *syncs {
	return &syncs{counts: map[string]int{}, seen: make(chan string, 100)}
}

func (s *syncs) record(key string) int {
	s.mu.Lock()
	s.counts[key]++
	n := s.counts[key]
	s.mu.Unlock()
	s.seen <- key
	return n
}

// wait waits for a sync of key, failing the test after a generous timeout (a failure, not a
// timing goal).
func (s *syncs) wait(t *testing.T, key string) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case k := <-s.seen:
			if k == key {
				return
			}
		case <-deadline:
			t.Fatalf("no sync of %q", key)
		}
	}
}

// run runs l until the test ends and checks that Run returns.
func run[K comparable](t *testing.T, l *kit.Loop[K]) context.CancelFunc {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		l.Run(ctx)
		close(done)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("Run did not return after its context ended")
		}
	})
	return cancel
}

func TestLoopRetriesUntilSyncSucceeds(t *testing.T) {
	s := newSyncs()
	l := kit.NewLoop(kit.LoopOptions[string]{
		Sync: func(_ context.Context, key string) kit.Result {
			return kit.Result{Retry: s.record(key) < 3}
		},
		RetryMinDelay: time.Millisecond,
		RetryMaxDelay: 5 * time.Millisecond,
	})
	run(t, l)
	l.Add("a")
	for range 3 {
		s.wait(t, "a")
	}
	// A success forgets the key: adding it again syncs it once more, with no retries left over.
	l.Add("a")
	s.wait(t, "a")
	s.mu.Lock()
	defer s.mu.Unlock()
	if got := s.counts["a"]; got != 4 {
		t.Errorf("a synced %d times, want 4", got)
	}
}

func TestLoopSyncsAgainAfter(t *testing.T) {
	s := newSyncs()
	l := kit.NewLoop(kit.LoopOptions[string]{
		Sync: func(_ context.Context, key string) kit.Result {
			if s.record(key) == 1 {
				return kit.Result{After: time.Millisecond}
			}
			return kit.Result{}
		},
	})
	run(t, l)
	l.Add("a")
	s.wait(t, "a")
	s.wait(t, "a")
}

func TestLoopAddAfter(t *testing.T) {
	s := newSyncs()
	l := kit.NewLoop(kit.LoopOptions[string]{
		Sync: func(_ context.Context, key string) kit.Result {
			s.record(key)
			return kit.Result{}
		},
	})
	run(t, l)
	l.AddAfter("later", time.Millisecond)
	s.wait(t, "later")
}

func TestLoopRunsKeysInParallelButEachKeyAlone(t *testing.T) {
	release := make(chan struct{})
	var (
		mu      sync.Mutex
		active  = map[string]int{}
		overlap bool
	)
	s := newSyncs()
	l := kit.NewLoop(kit.LoopOptions[string]{
		Sync: func(_ context.Context, key string) kit.Result {
			mu.Lock()
			active[key]++
			if active[key] > 1 {
				overlap = true
			}
			mu.Unlock()
			if key == "slow" {
				<-release
			}
			mu.Lock()
			active[key]--
			mu.Unlock()
			s.record(key)
			return kit.Result{}
		},
	})
	run(t, l)
	l.Add("slow")
	// "slow" is blocked until "fast" has been synced: only parallel keys get here.
	l.Add("fast")
	s.wait(t, "fast")
	// Adding "slow" while it syncs queues it again instead of running it twice at once.
	l.Add("slow")
	close(release)
	s.wait(t, "slow")
	s.wait(t, "slow")
	mu.Lock()
	defer mu.Unlock()
	if overlap {
		t.Error("a key was synced by two goroutines at once")
	}
}

func TestLoopResyncsKeys(t *testing.T) {
	s := newSyncs()
	l := kit.NewLoop(kit.LoopOptions[string]{
		Sync: func(_ context.Context, key string) kit.Result {
			s.record(key)
			return kit.Result{}
		},
		Keys:         func() []string { return []string{"known"} },
		ResyncPeriod: time.Millisecond,
	})
	run(t, l)
	// Never added: only the resync syncs it.
	s.wait(t, "known")
	s.wait(t, "known")
}

func TestLoopRunWaitsForRunningSyncs(t *testing.T) {
	started := make(chan struct{})
	var finished bool
	l := kit.NewLoop(kit.LoopOptions[string]{
		Sync: func(ctx context.Context, _ string) kit.Result {
			close(started)
			<-ctx.Done()
			finished = true
			// A retry asked for after the end is dropped.
			return kit.Result{Retry: true}
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		l.Run(ctx)
		close(done)
	}()
	l.Add("a")
	<-started
	cancel()
	<-done
	if !finished {
		t.Error("Run returned before the running sync")
	}
	// The queue is shut down: Add is a no-op and ShutDown may be called again.
	l.Add("b")
	l.ShutDown()
}

func TestLoopShutDownEndsRun(t *testing.T) {
	l := kit.NewLoop(kit.LoopOptions[string]{
		Sync:         func(context.Context, string) kit.Result { return kit.Result{} },
		Keys:         func() []string { return nil },
		ResyncPeriod: time.Hour,
	})
	done := make(chan struct{})
	go func() {
		l.Run(context.Background())
		close(done)
	}()
	l.ShutDown()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after ShutDown")
	}
}
