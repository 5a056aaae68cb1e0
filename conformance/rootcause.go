// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Root causes. A broken provider often breaks many tests for one reason: its Start returned, it
// engages nothing, or it ends engage contexts it should keep. The waits of a test check for
// these causes and fail at once naming the cause, instead of waiting out their timeouts and
// reporting a symptom such as "failed waiting for Informer to sync".

// errContextDied marks the root cause "an engage context ended on its own".
var errContextDied = errors.New("engage context ended on its own")

// returnedEarly returns an error naming the cause if the provider's Start (or the manager's)
// returned before the suite stopped it.
func (in *instance) returnedEarly() error {
	select {
	case <-in.done:
	default:
		return nil
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.cancelRun == nil || in.stopped {
		return nil
	}
	return fmt.Errorf("the provider's Start returned (with error %v) before the suite stopped it: a provider that "+
		"is not running engages nothing; Start must block until its context ends", in.startErr)
}

// deadCause returns an error naming the cause if e's engage context ended, and from when on
// a wait may fail because of it; the caller knows that the test did nothing that should end
// it.
func (s *spec) deadCause(e *engagement) (time.Time, error) {
	if e == nil || e.live() {
		return time.Time{}, nil
	}
	if e.deadAtEngage {
		return time.Time{}, fmt.Errorf("the provider engaged %q with a context that had already ended (%v): whatever is "+
			"started with it, including the cluster if the provider started it with that context, stops at once",
			e.name, context.Cause(e.ctx))
	}
	after, ended := "soon", time.Now()
	if at := e.endedAt.Load(); at > 0 {
		ended = time.Unix(0, at)
		after = ended.Sub(e.at).Round(time.Millisecond).String()
	}
	// A cluster that only lost its engage context may still work: let the wait go on for the
	// stability window before blaming the context.
	return ended.Add(s.opts.Timeouts.Stable), fmt.Errorf("%w: the engage context of %q ended %s after Engage (%v) although its member still exists: "+
		"the provider disengaged it, typically because it engaged with a context that ends with a sync or "+
		"reconcile (rule %s), and a cluster started with that context is stopped too",
		errContextDied, e.name, after, context.Cause(e.ctx), EngageContextLifetime)
}

// usingEngagement is the blocker of a wait that works through the cluster engaged as e.
func (s *spec) usingEngagement(in *instance, e *engagement) blocker {
	return func() (time.Time, error) {
		if err := in.returnedEarly(); err != nil {
			return time.Time{}, err
		}
		return s.deadCause(e)
	}
}

// waitingForEngage is the blocker of a wait for an Engage.
func (s *spec) waitingForEngage(in *instance) blocker {
	var first time.Time
	return func() (time.Time, error) {
		if v := in.probe.violationList(); len(v) > 0 {
			return time.Time{}, fmt.Errorf("the provider broke the contract: %s", strings.Join(v, "; "))
		}
		if err := in.returnedEarly(); err != nil {
			return time.Time{}, err
		}
		cause := s.run.noEngageCause()
		if cause != nil && s.run.engagedAny.Load() {
			cause = nil
		}
		if cause == nil {
			// Engaging again is pointless when engage contexts die on their own, as an earlier
			// wait found; a provider whose contexts do, but whose clusters still work, never
			// fails such a wait and is not affected.
			cause = s.run.deadContextCause()
		}
		if cause != nil {
			// Give this test's members the stability window, in case only a kind of member
			// (say, members added after Start) is never engaged.
			if first.IsZero() {
				first = time.Now()
			}
			return first.Add(s.opts.Timeouts.Stable), cause
		}
		return time.Time{}, nil
	}
}

// noteNoEngage records, when a wait for m's engagement failed without any Engage in the whole
// run so far, that the provider engages nothing: later tests then fail after the stability
// window with that cause instead of each waiting out Timeouts.Engage. Deferred by the waits.
func (s *spec) noteNoEngage(in *instance, m Member) {
	p := recover()
	if p == nil {
		return
	}
	if f, ok := p.(specFailure); ok && !s.run.engagedAny.Load() && s.run.noEngageCause() == nil &&
		in.returnedEarly() == nil && s.ctx.Err() == nil {
		cause := fmt.Errorf("the provider has engaged no member in this run: in %s it did not engage "+
			"member %q (as %q) within Timeouts.Engage (%s) while its Start was running", s.test.ID, m.ID, m.Name, s.opts.Timeouts.Engage)
		s.run.setNoEngageCause(cause)
		panic(specFailure{msg: f.msg + "; root cause: " + cause.Error()})
	}
	panic(p)
}

// causeOf returns " (root cause: ...)" for a failure message when one of engs died while the
// test did nothing to end it, or Start returned early; "" otherwise.
func (s *spec) causeOf(in *instance, engs ...*engagement) string {
	if err := in.returnedEarly(); err != nil {
		return fmt.Sprintf(" (root cause: %v)", err)
	}
	for _, e := range engs {
		if _, err := s.deadCause(e); err != nil {
			return fmt.Sprintf(" (root cause: %v)", err)
		}
	}
	return ""
}
