// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package providertest

import (
	"context"
	"testing"
	"time"

	"mcr.dev/core/multicluster"
)

// Running is a provider started by Start.
type Running struct {
	// Recorder is the Aware the provider engages clusters with.
	Recorder *Recorder
	stop     func()
}

// Stop cancels the provider's context and waits for Start to return; the test fails if Start
// returns an error or does not return within the shutdown timeout. Stop is idempotent and runs
// at the end of the test anyway.
func (r *Running) Stop() { r.stop() }

// Start runs p.Start with a new Recorder until the test ends (or Stop is called). shutdown bounds
// how long Start may take to return once its context ends.
func Start(t testing.TB, p multicluster.ProviderRunnable, shutdown time.Duration) *Running {
	t.Helper()
	rec := NewRecorder()
	run := RunInBackground(t, "provider Start", shutdown, func(ctx context.Context) error { return p.Start(ctx, rec) })
	return &Running{Recorder: rec, stop: run.Stop}
}

// StartFails runs p.Start with a new Recorder and fails the test unless Start returns an error
// within timeout (as it should with a host that refuses the provider's credentials); it returns
// that error, for a leak test to scan.
func StartFails(t testing.TB, p multicluster.ProviderRunnable, timeout time.Duration) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	err := p.Start(ctx, NewRecorder())
	if err == nil || ctx.Err() != nil {
		t.Errorf("provider Start: %v, want an error before %s passed", err, timeout)
	}
	return err
}
