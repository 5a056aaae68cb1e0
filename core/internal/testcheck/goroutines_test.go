// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package testcheck

import (
	"strings"
	"testing"
	"time"
)

func TestSettledGoroutinesCountsWhatStays(t *testing.T) {
	baseline := SettledGoroutines()
	stop := make(chan struct{})
	for range 3 {
		go func() { <-stop }()
	}
	// A goroutine that ends on its own is not part of the settled count.
	go time.Sleep(20 * time.Millisecond)
	if got := SettledGoroutines(); got != baseline+3 {
		t.Errorf("SettledGoroutines with 3 blocked goroutines = %d, want %d", got, baseline+3)
	}
	close(stop)
	WaitForGoroutines(t, baseline, time.Minute)
}

func TestWaitForGoroutinesWaitsForThemToEnd(t *testing.T) {
	baseline := SettledGoroutines()
	stop := make(chan struct{})
	go func() { <-stop }()
	go func() {
		time.Sleep(100 * time.Millisecond)
		close(stop)
	}()
	// Run on t itself: Failure would add a goroutine of its own.
	WaitForGoroutines(t, baseline, time.Minute)
	select {
	case <-stop:
	default:
		t.Error("WaitForGoroutines returned while a goroutine above the limit still ran")
	}
}

func TestWaitForGoroutinesFailsWithADump(t *testing.T) {
	baseline := SettledGoroutines()
	stop := make(chan struct{})
	defer close(stop)
	go leakedWorker(stop)
	msg := Failure(t, func(tb testing.TB) { WaitForGoroutines(tb, baseline, 200*time.Millisecond) })
	for _, want := range []string{"still run after 200ms", "want at most", "testcheck.leakedWorker"} {
		if !strings.Contains(msg, want) {
			t.Errorf("failure does not mention %q:\n%s", want, msg)
		}
	}
}

func leakedWorker(stop <-chan struct{}) { <-stop }

func TestFailureRecordsAndEnds(t *testing.T) {
	reached := false
	msg := Failure(t, func(tb testing.TB) {
		tb.Errorf("first %d", 1)
		tb.Fatal("second")
		reached = true
	})
	if msg != "first 1\nsecond" {
		t.Errorf("Failure = %q, want both messages", msg)
	}
	if reached {
		t.Error("fn went on after Fatal")
	}
	if msg := Failure(t, func(testing.TB) {}); msg != "" {
		t.Errorf("Failure of a function that does not fail = %q, want empty", msg)
	}
}
