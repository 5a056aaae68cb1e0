// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package conformance

import "context"

// RunTests runs the suite without Ginkgo and returns the results and the report: the self-test
// runs many providers in one test binary this way, which Ginkgo's one suite per binary forbids.
func RunTests(ctx context.Context, h Harness, o Options, logf func(string, ...any)) ([]TestResult, *Report, error) {
	r, err := newSuiteRun(h, o)
	if err != nil {
		return nil, nil, err
	}
	results := r.runAll(ctx, logf)
	rep, err := r.finish()
	return results, rep, err
}

// RunTest runs one test by ID, without Ginkgo.
func RunTest(ctx context.Context, h Harness, o Options, id string, logf func(string, ...any)) (TestResult, error) {
	r, err := newSuiteRun(h, o)
	if err != nil {
		return TestResult{}, err
	}
	t, _ := testByID(id)
	return r.runTest(ctx, t, logf), nil
}
