// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package testcheck

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// Failure runs fn with a testing.TB that records failures instead of failing t, and returns
// their messages joined by newlines ("" if fn did not fail): for the tests of a test helper,
// which must show that the helper fails when it should. Fatal and FailNow end fn, as they end
// a test; everything else (Context, Cleanup, TempDir, Log) is t's.
func Failure(t testing.TB, fn func(testing.TB)) string {
	t.Helper()
	r := &failureRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(r)
	}()
	<-done
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.messages, "\n")
}

// failureRecorder is a testing.TB whose failures are recorded, not reported.
type failureRecorder struct {
	testing.TB

	mu       sync.Mutex
	failed   bool
	messages []string
}

func (r *failureRecorder) record(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = true
	if msg == "" {
		msg = "(failed without a message)"
	}
	r.messages = append(r.messages, msg)
}

func (r *failureRecorder) Fail()                     { r.record("") }
func (r *failureRecorder) Error(args ...any)         { r.record(fmt.Sprint(args...)) }
func (r *failureRecorder) Errorf(f string, a ...any) { r.record(fmt.Sprintf(f, a...)) }

// FailNow ends the calling goroutine, the one Failure runs fn in, as testing.T's does.
func (r *failureRecorder) FailNow()          { r.record(""); runtime.Goexit() }
func (r *failureRecorder) Fatal(args ...any) { r.record(fmt.Sprint(args...)); runtime.Goexit() }
func (r *failureRecorder) Fatalf(f string, a ...any) {
	r.record(fmt.Sprintf(f, a...))
	runtime.Goexit()
}

func (r *failureRecorder) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}
