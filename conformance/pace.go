// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"fmt"
	"time"
)

// A wait for the provider to act (engage a member, engage it again, show an object written to
// it) is bounded by Timeouts.Engage, which is generous because a first engagement may be slow.
// Once the provider has shown its pace in the run, a broken one need not wait that out: such a
// wait fails after paceFactor times the slowest engagement of the run so far, at least
// paceFloor. A provider whose source of truth is polled engages added members at the pace of
// the poll too, so the window grows with it.
const (
	paceFactor = 10
	paceFloor  = 30 * time.Second
)

// noteEngageLatency records how long the provider took to engage a member after the suite
// created it.
func (r *suiteRun) noteEngageLatency(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.slowestEngage = max(r.slowestEngage, d)
	r.engageSamples++
}

// paceWindow returns how long a wait for the provider to act may take and the slowest
// engagement it is based on; ok is false while the pace is unknown or Timeouts.Engage is
// shorter anyway.
func (s *spec) paceWindow() (window, slowest time.Duration, ok bool) {
	s.run.mu.Lock()
	slowest, n := s.run.slowestEngage, s.run.engageSamples
	s.run.mu.Unlock()
	if n == 0 {
		return 0, 0, false
	}
	window = max(paceFloor, paceFactor*slowest)
	return window, slowest, window < s.opts.Timeouts.Engage
}

// slowerThanUsual is the blocker of a wait for the provider to act that starts now; what says
// what the wait waits for. It names its cause only shortly before the wait may fail of it, so
// that reads are not cut short before (see readTimeout).
func (s *spec) slowerThanUsual(what string) blocker {
	start := time.Now()
	return func() (time.Time, error) {
		window, slowest, ok := s.paceWindow()
		if !ok {
			return time.Time{}, nil
		}
		failAt := start.Add(window)
		if time.Until(failAt) > 10*time.Second {
			return time.Time{}, nil
		}
		return failAt, fmt.Errorf("%s took longer than %s, while the provider engaged every member so far within %s "+
			"(such a wait fails after %d times that, at least %s, before Timeouts.Engage, %s)",
			what, window, slowest.Round(time.Millisecond), paceFactor, paceFloor, s.opts.Timeouts.Engage)
	}
}

// anyBlocker combines blockers: of those that name a cause, the one that lets the wait fail
// first.
func anyBlocker(blockers ...blocker) blocker {
	return func() (time.Time, error) {
		var failAt time.Time
		var cause error
		for _, b := range blockers {
			at, err := b()
			if err != nil && (cause == nil || at.Before(failAt)) {
				failAt, cause = at, err
			}
		}
		return failAt, cause
	}
}

// stallWindow is how long ScaleEngageDisengage waits for the next of many members to be
// engaged: the pace window when known, else Timeouts.Engage.
func (s *spec) stallWindow() time.Duration {
	if window, _, ok := s.paceWindow(); ok {
		return window
	}
	return s.opts.Timeouts.Engage
}
