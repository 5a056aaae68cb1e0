// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package providertest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"mcr.dev/core/providers/providertest"
)

// errorsT records the errors a helper reports and the cleanups it registers, so that a test can
// check that the helper fails a test when it should.
type errorsT struct {
	testing.TB
	errs     []string
	cleanups []func()
}

func (e *errorsT) Helper() {}
func (e *errorsT) Errorf(format string, args ...any) {
	e.errs = append(e.errs, fmt.Sprintf(format, args...))
}
func (e *errorsT) Cleanup(f func()) { e.cleanups = append(e.cleanups, f) }

func TestRunInBackground(t *testing.T) {
	for _, c := range []struct {
		name    string
		run     func(ctx context.Context) error
		wantErr string
	}{
		{"returns nil", func(ctx context.Context) error { <-ctx.Done(); return nil }, ""},
		{"returns an error", func(ctx context.Context) error { <-ctx.Done(); return errors.New("boom") }, "runner returned: boom"},
		{"does not return", func(context.Context) error { time.Sleep(time.Second); return nil }, "runner did not return within 50ms"},
	} {
		t.Run(c.name, func(t *testing.T) {
			et := &errorsT{TB: t}
			b := providertest.RunInBackground(et, "runner", 50*time.Millisecond, c.run)
			select {
			case <-b.Done():
				t.Fatal("Done is closed before the context ended")
			default:
			}
			if len(et.cleanups) != 1 {
				t.Fatalf("%d cleanups registered, want 1", len(et.cleanups))
			}
			b.Stop()
			et.cleanups[0]() // the test's end after Stop: reports nothing twice
			got := strings.Join(et.errs, "; ")
			if c.wantErr == "" && got != "" || !strings.Contains(got, c.wantErr) || len(et.errs) > 1 {
				t.Errorf("reported %q, want %q once", got, c.wantErr)
			}
		})
	}
}

func TestRunInBackgroundKeepsErr(t *testing.T) {
	boom := errors.New("boom")
	et := &errorsT{TB: t}
	b := providertest.RunInBackground(et, "runner", time.Second, func(context.Context) error { return boom })
	<-b.Done()
	if !errors.Is(b.Err(), boom) {
		t.Errorf("Err() = %v, want %v", b.Err(), boom)
	}
}
