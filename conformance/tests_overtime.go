// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"fmt"
	"time"
)

// Tests of how a provider behaves over time, not in one engagement: a provider can handle the
// first rotation and not the next, or serve a member well at first and stop serving it later.

// repeatedRotations is how many rotations in a row RepeatedCredentialRotation makes.
const repeatedRotations = 3

// servedResyncs is how many resync periods ServedAcrossResyncs keeps a member engaged before
// it checks that the member is still served.
const servedResyncs = 5

func testRepeatedCredentialRotation(s *spec) {
	rotator := s.rotator()
	in := s.start()
	m := s.create("rerot")
	cur := s.waitEngaged(in, m)
	s.expectReaches(in, cur, m)
	s.expectGetReturns(in, cur, m, "once it was engaged")
	for i := 1; i <= repeatedRotations; i++ {
		what := fmt.Sprintf("rotation %d of %d", i, repeatedRotations)
		cur = s.rotate(in, cur, m, rotator, what, anyBlocker(s.waitingForEngage(in), s.slowerThanUsual("the engagement after the rotation")))
		s.expectGetReturns(in, cur, m, "after "+what)
	}
}

func testServedAcrossResyncs(s *spec) {
	period := s.resyncPeriod()
	window := servedResyncs * period
	if window+s.opts.Timeouts.Stable > s.opts.Timeouts.Engage {
		s.erroredf("harness: ResyncPeriod %s is too long for the test: %d resyncs must fit in Timeouts.Engage (%s)", period, servedResyncs, s.opts.Timeouts.Engage)
	}
	in := s.start()
	m := s.create("served")
	e := s.waitEngaged(in, m)
	// Reading through the cache starts the informer that must keep watching the member.
	s.expectReaches(in, e, m)
	deadline := time.Now().Add(window)
	for time.Now().Before(deadline) && s.ctx.Err() == nil {
		if !e.live() {
			s.failf("the engage context of %q ended during %d resync periods (every %s) of an unchanged member%s", m.Name, servedResyncs, period, s.causeOf(in, e))
		}
		select {
		case <-s.ctx.Done():
		case <-time.After(pollInterval):
		}
	}
	// Written after the resyncs: only a cache that still watches the member shows it.
	s.expectCacheSeesWrite(in, e, m, "served-"+m.ID, anyBlocker(s.usingEngagement(in, e), s.slowerThanUsual("the object written after the resyncs")), nil,
		"after %d resync periods, the cluster engaged as %q must still see objects written to its member", servedResyncs, m.Name)
	s.expectGetReturns(in, e, m, fmt.Sprintf("after %d resync periods", servedResyncs))
}

// resyncPeriod returns the harness's resync period, for the tests of PeriodicResync.
func (s *spec) resyncPeriod() time.Duration {
	resyncer, ok := s.h.(Resyncer)
	if !ok {
		s.erroredf("the provider claims %s, but the harness (%T) does not implement Resyncer", PeriodicResync, s.h)
	}
	period := resyncer.ResyncPeriod()
	if period <= 0 {
		s.erroredf("harness: ResyncPeriod returned %s; it must be positive", period)
	}
	return period
}
