// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package testcheck

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestWaitForReturnsOnceTheConditionHolds(t *testing.T) {
	var calls atomic.Int32
	msg := Failure(t, func(tb testing.TB) {
		WaitFor(tb, "the third call", func() bool { return calls.Add(1) >= 3 })
	})
	if msg != "" {
		t.Errorf("WaitFor failed: %s", msg)
	}
	if got := calls.Load(); got != 3 {
		t.Errorf("cond called %d times, want 3 (WaitFor must stop polling once it holds)", got)
	}
}

func TestWithinReportsAConditionThatNeverHolds(t *testing.T) {
	if Within(50*time.Millisecond, func() bool { return false }) {
		t.Error("Within reported a condition that never holds as held")
	}
	if !Within(time.Minute, func() bool { return true }) {
		t.Error("Within reported a condition that holds at once as not held")
	}
}
