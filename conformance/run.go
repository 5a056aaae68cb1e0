package conformance

import (
	"context"
	"fmt"
	"runtime/debug"
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

	mu      sync.Mutex
	results map[string]TestResult
}

func newSuiteRun(h Harness, o Options) (*suiteRun, error) {
	o = o.withDefaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	r := &suiteRun{h: h, opts: o, started: time.Now(), results: map[string]TestResult{}}
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
	} else {
		start := time.Now()
		res.Result, res.Message = r.execute(ctx, t, logf)
		res.DurationSeconds = time.Since(start).Round(10 * time.Millisecond).Seconds()
	}
	r.mu.Lock()
	r.results[t.ID] = res
	r.mu.Unlock()
	return res
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
	s := &spec{ctx: ctx, opts: r.opts, h: r.h, test: t, logf: logf}

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
	if result == Failed && parent.Err() != nil {
		result, msg = Errored, "interrupted: "+msg
	}
	if err := s.runCleanups(); err != nil {
		logf("%s: cleanup: %v", t.ID, err)
	}
	return result, msg
}

// nameSeq makes member names unique within the test binary, across runs sharing a fleet.
var nameSeq atomic.Int64

// newMemberName returns a fresh DNS-1123 label for a member, from a short hint.
func newMemberName(hint string) string {
	return fmt.Sprintf("%s-%d", hint, nameSeq.Add(1))
}
