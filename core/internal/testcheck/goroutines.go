// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package testcheck holds checks that core's own tests share and users of mcr.dev/core/envtest
// do not need: goroutine leak checks, and Failure, which shows that a test helper fails when it
// should. Fleet helpers (clients, namespaces) are in envtest.
package testcheck

import (
	"bytes"
	"runtime"
	"runtime/pprof"
	"testing"
	"time"
)

// goroutinePoll is how often the goroutine count is read while it settles or falls.
const goroutinePoll = 50 * time.Millisecond

// SettledGoroutines returns the goroutine count once it has stayed the same for a quarter of a
// second (or after five seconds): the baseline of a leak check, taken after what earlier tests
// left behind has wound down.
func SettledGoroutines() int {
	last, stable := runtime.NumGoroutine(), 0
	for i := 0; i < 100 && stable < 5; i++ {
		time.Sleep(goroutinePoll)
		if n := runtime.NumGoroutine(); n == last {
			stable++
		} else {
			last, stable = n, 0
		}
	}
	return last
}

// WaitForGoroutines waits until at most limit goroutines run and fails the test, with a dump
// of every goroutine, if that has not happened within timeout. Goroutines end asynchronously
// after whatever started them has returned, so a leak check must wait; timeout only bounds a
// leak, it is not what the test asserts.
func WaitForGoroutines(t testing.TB, limit int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for runtime.NumGoroutine() > limit {
		if time.Now().After(deadline) {
			var dump bytes.Buffer
			_ = pprof.Lookup("goroutine").WriteTo(&dump, 1)
			t.Fatalf("%d goroutines still run after %s, want at most %d:\n%s", runtime.NumGoroutine(), timeout, limit, dump.String())
		}
		time.Sleep(goroutinePoll)
	}
}
