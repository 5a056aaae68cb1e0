// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Result is the outcome of one test.
type Result string

const (
	// Passed means the provider did what the rule asks.
	Passed Result = "passed"
	// Failed means the provider did something the rule forbids, or not what it requires.
	Failed Result = "failed"
	// Errored means the suite could not decide, because the harness or the environment failed.
	Errored Result = "errored"
	// Skipped means the test was not run (Options.Skip, Options.Only, or not reached).
	Skipped Result = "skipped"
	// NotSupported means the test needs a feature the provider does not claim.
	NotSupported Result = "notSupported"
)

// Results returns every result, in a stable order.
func Results() []Result { return []Result{Passed, Failed, Errored, Skipped, NotSupported} }

// TestResult is the outcome of one test in a run.
type TestResult struct {
	ID              string  `json:"id"`
	Feature         Feature `json:"feature"`
	Result          Result  `json:"result"`
	Message         string  `json:"message,omitempty"`
	DurationSeconds float64 `json:"durationSeconds"`
}

// suiteRun is one run of the suite against one harness: it runs tests and collects results.
type suiteRun struct {
	h       Harness
	opts    Options
	started time.Time
	// deadline ends the run: Timeouts.Run after its start, or RunReserve before go test's
	// deadline if that is earlier.
	deadline time.Time
	budget   error

	// engagedAny is set by the first Engage any probe of the run sees.
	engagedAny atomic.Bool

	mu      sync.Mutex
	results map[string]TestResult
	// noEngage is the root cause "the provider engages nothing", once a test found it.
	noEngage error
	// deadContext is the root cause "engage contexts die on their own", once a wait failed
	// because of it.
	deadContext error
	// incomplete says why the run ended before every test ran; "" while it has not.
	incomplete string
	// manager names the manager of ModeManager, once a test built one.
	manager string
	// slowestEngage is the longest time a member took to be engaged after it was created,
	// of engageSamples (see paceWindow).
	slowestEngage time.Duration
	engageSamples int
}

// noteManager records which manager ModeManager runs the provider under, for the report: the
// package of its type.
func (r *suiteRun) noteManager(m Manager) {
	t := reflect.TypeOf(m)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	name := t.PkgPath()
	if name == "" {
		name = fmt.Sprintf("%T", m)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.manager = name
}

// limitTo makes the run end RunReserve before testDeadline (go test's -timeout), if that is
// earlier than its own budget.
func (r *suiteRun) limitTo(testDeadline time.Time) {
	if testDeadline.IsZero() {
		return
	}
	if d := testDeadline.Add(-RunReserve); d.Before(r.deadline) {
		r.deadline = d
		r.budget = fmt.Errorf("the run's time budget ran out (%s before go test's -timeout deadline; raise -timeout)", RunReserve)
	}
}

func (r *suiteRun) markIncomplete(why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.incomplete == "" {
		r.incomplete = why
	}
}

func (r *suiteRun) noEngageCause() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.noEngage
}

func (r *suiteRun) deadContextCause() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.deadContext == nil {
		return nil
	}
	return fmt.Errorf("earlier in this run, %w", r.deadContext)
}

func (r *suiteRun) setDeadContextCause(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.deadContext == nil {
		r.deadContext = err
	}
}

func (r *suiteRun) setNoEngageCause(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.noEngage = err
}

func newSuiteRun(h Harness, o Options) (*suiteRun, error) {
	o = o.withDefaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	now := time.Now()
	r := &suiteRun{h: h, opts: o, started: now, results: map[string]TestResult{},
		deadline: now.Add(o.Timeouts.Run),
		budget:   fmt.Errorf("the run's time budget ran out (Timeouts.Run, %s)", o.Timeouts.Run)}
	r.limitTo(goTestDeadline())
	for _, t := range catalog {
		res, why, ok := o.selected(t)
		if ok {
			res, why = Skipped, "not run"
		}
		r.results[t.ID] = TestResult{ID: t.ID, Feature: t.Feature, Result: res, Message: why}
	}
	return r, nil
}

// runTest runs one test (unless the options leave it out) and records its result. logf
// receives progress lines.
func (r *suiteRun) runTest(ctx context.Context, t Test, logf func(string, ...any)) TestResult {
	res := TestResult{ID: t.ID, Feature: t.Feature}
	if result, why, ok := r.opts.selected(t); !ok {
		res.Result, res.Message = result, why
	} else if why := r.failedDependency(t); why != "" {
		res.Result, res.Message = Skipped, why
	} else if time.Now().After(r.deadline) {
		res.Result, res.Message = Skipped, fmt.Sprintf("not run: %v", r.budget)
		r.markIncomplete(fmt.Sprintf("%v before %s started; the tests from there on were not run", r.budget, t.ID))
	} else {
		ctx, cancel := context.WithDeadlineCause(ctx, r.deadline, r.budget)
		defer cancel()
		start := time.Now()
		res.Result, res.Message = r.execute(ctx, t, logf)
		res.DurationSeconds = time.Since(start).Round(10 * time.Millisecond).Seconds()
	}
	r.mu.Lock()
	r.results[t.ID] = res
	r.mu.Unlock()
	r.printResult(res)
	return res
}

// printResult writes the progress line of a test that ended to Options.Output.
func (r *suiteRun) printResult(res TestResult) {
	n := slices.IndexFunc(catalog, func(t Test) bool { return t.ID == res.ID }) + 1
	line := fmt.Sprintf("conformance [%2d/%d] %-28s %-12s %6.1fs", n, len(catalog), res.ID, res.Result, res.DurationSeconds)
	if res.Result == Failed || res.Result == Errored || res.Result == Skipped {
		line += "  " + noteOf(res.Message)
	}
	_, _ = fmt.Fprintln(r.opts.Output, strings.TrimRight(line, " "))
}

// printSummary writes the summary table and where the report went to Options.Output.
func (r *suiteRun) printSummary(rep *Report, writeErr error) {
	w := r.opts.Output
	_, _ = fmt.Fprintln(w)
	_, _ = fmt.Fprint(w, rep.Markdown())
	switch path := r.opts.ReportPath; {
	case path == "":
		_, _ = fmt.Fprintf(w, "\nNo report file written: set Options.ReportPath or %s to write one.\n", ReportEnv)
	case writeErr != nil:
		_, _ = fmt.Fprintf(w, "\nThe report could not be written to %s: %v\n", path, writeErr)
	default:
		_, _ = fmt.Fprintf(w, "\nReport written to %s (check it with: go run mcr.dev/conformance/cmd/verify %s)\n", path, path)
	}
}

// runAll runs every test in order; for callers without Ginkgo (the self-test).
func (r *suiteRun) runAll(ctx context.Context, logf func(string, ...any)) []TestResult {
	out := make([]TestResult, 0, len(catalog))
	for _, t := range catalog {
		out = append(out, r.runTest(ctx, t, logf))
	}
	return out
}

// specFailure and specError are the panics that end a test as failed or errored.
type specFailure struct{ msg string }
type specError struct{ msg string }

// execute runs one test body and classifies how it ended.
func (r *suiteRun) execute(ctx context.Context, t Test, logf func(string, ...any)) (result Result, msg string) {
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s := &spec{ctx: ctx, opts: r.opts, h: r.h, test: t, logf: logf, run: r}

	func() {
		defer func() {
			if p := recover(); p != nil {
				switch v := p.(type) {
				case specFailure:
					result, msg = Failed, v.msg
				case specError:
					result, msg = Errored, v.msg
				default:
					result, msg = Failed, fmt.Sprintf("panic in the test (the provider panicked on a call of the suite): %v\n%s", p, debug.Stack())
				}
			}
		}()
		t.run(s)
		result = Passed
	}()

	// A test that ran into the end of its context was interrupted, not failed by the provider.
	if (result == Failed || result == Errored) && parent.Err() != nil {
		result, msg = Errored, "interrupted: "+msg
		if errors.Is(context.Cause(parent), r.budget) {
			r.markIncomplete(fmt.Sprintf("%v during %s; the tests from there on were not run", r.budget, t.ID))
		}
	}
	if parent.Err() == nil {
		if err := s.runCleanups(); err != nil {
			logf("%s: cleanup: %v", t.ID, err)
		}
		return result, msg
	}
	// Interrupted: the report must still be written in time, so cleanups (stopping a provider
	// that may not stop, deleting members) get a bounded grace and are then left behind.
	cleaned := make(chan error, 1)
	go func() { cleaned <- s.runCleanups() }()
	select {
	case err := <-cleaned:
		if err != nil {
			logf("%s: cleanup: %v", t.ID, err)
		}
	case <-time.After(interruptedCleanupGrace):
		logf("%s: cleanup still running after %s; left behind so that the report can be written", t.ID, interruptedCleanupGrace)
	}
	return result, msg
}

// interruptedCleanupGrace bounds the cleanup of a test interrupted by the end of the run.
const interruptedCleanupGrace = 30 * time.Second

// processStart approximates when go test started the test binary, for goTestDeadline.
var processStart = time.Now()

// goTestDeadline returns when go test's -timeout ends the test binary, counted from package
// initialization (a little before the testing package starts its clock, so it errs early), or
// the zero time without a timeout.
func goTestDeadline() time.Time {
	f := flag.Lookup("test.timeout")
	if f == nil {
		return time.Time{}
	}
	getter, ok := f.Value.(flag.Getter)
	if !ok {
		return time.Time{}
	}
	d, ok := getter.Get().(time.Duration)
	if !ok || d <= 0 {
		return time.Time{}
	}
	return processStart.Add(d)
}

// nameSeq makes member names unique within the test binary, across runs sharing a fleet.
var nameSeq atomic.Int64

// newMemberName returns a fresh DNS-1123 label for a member, from a short hint.
func newMemberName(hint string) string {
	return fmt.Sprintf("%s-%d", hint, nameSeq.Add(1))
}
