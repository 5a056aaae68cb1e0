// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package testcheck

import (
	"testing"
	"time"
)

// WaitTimeout bounds WaitFor. It only ends a hung test; it is not what a test asserts, so it
// is long enough for a busy machine running several test binaries at once.
const WaitTimeout = 2 * time.Minute

// waitPoll is how often WaitFor and Within look at their condition again.
const waitPoll = 20 * time.Millisecond

// WaitFor polls cond until it holds and returns how long that took; it fails t with what when
// cond does not hold within WaitTimeout. It is for conditions that become true asynchronously
// (an informer, a context's AfterFunc, a goroutine's effect), never a substitute for ordering.
func WaitFor(t testing.TB, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	if !Within(WaitTimeout, cond) {
		t.Fatalf("timed out waiting for %s", what)
	}
	return time.Since(start)
}

// Within polls cond until it holds or bound has passed, and reports whether it held: for a
// test that judges the outcome itself (a recovery bound it measures, a report it writes).
func Within(bound time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(bound)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(waitPoll)
	}
	return true
}
