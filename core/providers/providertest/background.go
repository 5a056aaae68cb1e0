// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package providertest

import (
	"context"
	"sync"
	"testing"
	"time"
)

// Background is a function RunInBackground runs until the test ends.
type Background struct {
	done chan struct{}
	err  error
	stop func()
}

// RunInBackground runs run in a goroutine until the test ends or Stop is called: then it cancels
// run's context and waits up to shutdown for run to return. The test fails, naming what, if run
// returns an error or does not return in time. Tests run a manager, a host cluster or a provider
// with an Aware of their own with it; a run whose error the test judges itself returns nil and
// keeps its error.
func RunInBackground(t testing.TB, what string, shutdown time.Duration, run func(context.Context) error) *Background {
	t.Helper()
	b := &Background{done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		defer close(b.done)
		b.err = run(ctx)
	}()
	var once sync.Once
	b.stop = func() {
		once.Do(func() {
			cancel()
			select {
			case <-b.done:
				if b.err != nil {
					t.Errorf("%s returned: %v", what, b.err)
				}
			case <-time.After(shutdown):
				t.Errorf("%s did not return within %s of its context ending", what, shutdown)
			}
		})
	}
	t.Cleanup(b.stop)
	return b
}

// Done is closed when run has returned.
func (b *Background) Done() <-chan struct{} { return b.done }

// Err is what run returned, once Done is closed.
func (b *Background) Err() error { return b.err }

// Stop cancels run's context and waits for it to return, as the end of the test would. It is
// idempotent.
func (b *Background) Stop() { b.stop() }
