// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package conformance_test

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"mcr.dev/conformance"
	"mcr.dev/conformance/internal/reference"
)

// measureEnv, when set, makes TestMeasureBrokenProviders run: a comma-separated list of broken
// providers (names from brokenProviders), or "all".
const measureEnv = "MCR_CONFORMANCE_MEASURE"

// measureParallelism is how many measured runs share the machine at once.
const measureParallelism = 3

// TestMeasureBrokenProviders measures how long a run against each broken provider takes with
// the default options a provider's TestConformance uses (every feature claimed, default
// timeouts and ScaleMembers), for the figures in docs/conformance.md. NoGoroutineLeak, which
// counts the goroutines of the whole process, is left out because the runs overlap. It only
// measures; the self-test checks the results.
//
//	MCR_CONFORMANCE_MEASURE=KeepOnDelete,StaleGet go test -race -run '^TestMeasureBrokenProviders$' -timeout 60m .
func TestMeasureBrokenProviders(t *testing.T) {
	which := os.Getenv(measureEnv)
	if which == "" {
		t.Skipf("set %s to measure", measureEnv)
	}
	cases := []brokenProvider{{name: "Reference"}}
	for _, b := range brokenProviders {
		if which == "all" || slices.Contains(strings.Split(which, ","), b.name) {
			cases = append(cases, b)
		}
	}
	type row struct {
		name    string
		took    time.Duration
		failed  int
		skipped int
		passed  int
	}
	rows := make([]row, len(cases))
	sem := make(chan struct{}, measureParallelism)
	var wg sync.WaitGroup
	for i, b := range cases {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			o := conformance.Options{
				Features:      referenceFeatures(),
				ManagerConfig: fleet.Member("host").Config(),
				Skip:          []string{conformance.NoGoroutineLeak},
				Output:        io.Discard,
			}
			start := time.Now()
			results, _, err := conformance.RunTests(t.Context(), reference.NewHarness(newFleet(), b.faults), o, func(string, ...any) {})
			if err != nil {
				t.Error(err)
				return
			}
			r := row{name: b.name, took: time.Since(start)}
			for _, res := range results {
				switch {
				case res.Result == conformance.Failed:
					r.failed++
				case res.Result == conformance.Passed:
					r.passed++
				case res.Result == conformance.Skipped && res.ID != conformance.NoGoroutineLeak:
					r.skipped++
				}
			}
			rows[i] = r
		})
	}
	wg.Wait()
	var b strings.Builder
	fmt.Fprintf(&b, "| Provider | Seconds | Failed | Skipped (a needed rule failed) | Passed |\n|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %.0f | %d | %d | %d |\n", r.name, r.took.Seconds(), r.failed, r.skipped, r.passed)
	}
	t.Log("\n" + b.String())
}
