// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// SourceRestarter is implemented by harnesses of providers that claim SourceRestart.
type SourceRestarter interface {
	// StopSource makes the source of truth unreachable for the provider, as an outage or a
	// restart of its API server does (for a provider that reads objects of a host cluster:
	// the host's apiserver stops answering and drops its connections). restart brings it back
	// with the same content. The suite calls restart exactly once.
	StopSource(ctx context.Context) (restart func(context.Context) error, err error)
}

// Resyncer is implemented by harnesses of providers that claim PeriodicResync.
type Resyncer interface {
	// ResyncPeriod returns how often the provider instances the harness builds read their
	// whole source of truth again (the kit's Options.ResyncPeriod); the suite waits for two
	// resyncs. Keep it short (seconds) for the test.
	ResyncPeriod() time.Duration
}

func testSurvivesSourceRestart(s *spec) {
	restarter, ok := s.h.(SourceRestarter)
	if !ok {
		s.erroredf("the provider claims %s, but the harness (%T) does not implement SourceRestarter", SourceRestart, s.h)
	}
	in := s.start()
	kept, gone := s.create("kept"), s.create("gone")
	ek, eg := s.waitEngaged(in, kept), s.waitEngaged(in, gone)
	s.expectReaches(in, ek, kept)
	mark := in.probe.mark()

	ctx, cancel := s.harnessCtx()
	restart, err := restarter.StopSource(ctx)
	cancel()
	if err != nil {
		s.erroredf("harness: StopSource: %v", err)
	}
	// Long enough for the provider's watch to notice the outage.
	s.wait(s.opts.Timeouts.Stable, func() bool { return false })
	ctx, cancel = s.harnessCtx()
	err = restart(ctx)
	cancel()
	if err != nil {
		s.erroredf("harness: restarting the source of truth: %v", err)
	}

	// Changes made after the outage must be seen: the provider watches the source again.
	added := s.create("added")
	s.delete(gone)
	ea := s.waitEngaged(in, added)
	s.expectReaches(in, ea, added)
	s.waitDone(eg, s.opts.Timeouts.Disengage, "after its member was deleted, once the source of truth was back")
	// And the member that did not change kept its engagement through it all.
	s.consistently(func() error {
		if !ek.live() {
			return fmt.Errorf("the engage context of %q ended (%v): a member that did not change was disengaged by the outage or the relist after it",
				kept.Name, context.Cause(ek.ctx))
		}
		if next := in.probe.latest(kept.Name, mark); next != nil {
			return fmt.Errorf("%q was engaged again (%s) although it did not change: the relist after the outage must not re-engage unchanged members",
				kept.Name, in.probe.describe(kept.Name))
		}
		return nil
	}, "an unchanged member must stay engaged, once, through an outage of the source of truth")
	s.expectReaches(in, ek, kept)
}

func testNoReengageOnResync(s *spec) {
	resyncer, ok := s.h.(Resyncer)
	if !ok {
		s.erroredf("the provider claims %s, but the harness (%T) does not implement Resyncer", PeriodicResync, s.h)
	}
	period := resyncer.ResyncPeriod()
	if period <= 0 {
		s.erroredf("harness: ResyncPeriod returned %s; it must be positive", period)
	}
	if window := 2*period + s.opts.Timeouts.Stable; window > s.opts.Timeouts.Engage {
		s.erroredf("harness: ResyncPeriod %s is too long for the test: two resyncs must fit in Timeouts.Engage (%s)", period, s.opts.Timeouts.Engage)
	}
	in := s.start()
	m := s.create("resync")
	e := s.waitEngaged(in, m)
	mark := in.probe.mark()
	deadline := time.Now().Add(2*period + s.opts.Timeouts.Stable)
	for time.Now().Before(deadline) {
		if err := s.ctx.Err(); err != nil {
			s.failf("interrupted: %v", errors.Join(err, context.Cause(s.ctx)))
		}
		if !e.live() {
			s.failf("the engage context of %q ended (%v) during periodic resyncs of an unchanged source of truth", m.Name, context.Cause(e.ctx))
		}
		if next := in.probe.latest(m.Name, mark); next != nil {
			s.failf("%q was engaged again during periodic resyncs (every %s) although nothing changed: %s", m.Name, period, in.probe.describe(m.Name))
		}
		select {
		case <-s.ctx.Done():
		case <-time.After(pollInterval):
		}
	}
	s.expectReaches(in, e, m)
}
