// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kit_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"mcr.dev/core/providers/kit"
)

// The Engine's queue syncs keys in parallel, one goroutine per key at a time, and retries a key
// whose sync asks for it with exponential backoff.
func TestLoopRetriesWithBackoff(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var (
		mu     sync.Mutex
		synced []string
		tries  = map[string]int{}
	)
	l := kit.NewLoop(kit.LoopOptions[string]{
		Name:          "example-provider",
		RetryMinDelay: 10 * time.Millisecond,
		Sync: func(_ context.Context, key string) kit.Result {
			mu.Lock()
			defer mu.Unlock()
			tries[key]++
			if key == "flaky" && tries[key] < 2 {
				// Transient failure: try again after the backoff.
				return kit.Result{Retry: true}
			}
			synced = append(synced, fmt.Sprintf("%s after %d tries", key, tries[key]))
			if len(synced) == 2 {
				cancel()
			}
			return kit.Result{}
		},
	})
	l.Add("steady")
	l.Add("flaky")
	l.Run(ctx) // returns once ctx ends and the running syncs have returned

	slices.Sort(synced)
	if want := []string{"flaky after 2 tries", "steady after 1 tries"}; !slices.Equal(synced, want) {
		t.Errorf("synced %q, want %q", synced, want)
	}
}
