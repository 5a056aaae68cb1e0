// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
)

// Run runs the whole suite against the provider behind h, as the only Ginkgo suite of the test
// binary: it registers the specs, calls RunSpecs and fails t if any test failed or errored.
// Tests of features the provider does not claim are skipped as "notSupported". At the end the
// markdown summary goes to the test log and, if Options.ReportPath (or MCR_CONFORMANCE_REPORT)
// names a file, the YAML report is written there.
//
// Ginkgo runs one suite per test binary, so call Run once per binary (typically from
// TestConformance in a provider's conformance_test.go). To run the suite inside a Ginkgo suite
// of your own, use RegisterSpecs instead.
func Run(t *testing.T, h Harness, o Options) {
	t.Helper()
	var report *Report
	testDeadline, _ := t.Deadline()
	registerSpecs(func() Harness { return h }, func() Options { return o }, testDeadline, func(r *Report) { report = r })
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, "mcr provider conformance")
	if report != nil {
		t.Log("\n" + report.Markdown())
	}
}

// RegisterSpecs registers the suite's specs in the caller's Ginkgo tree, in one Ordered
// container, so that a provider that already has a Ginkgo suite runs conformance as part of it.
// Call it at the top level (var _ = conformance.RegisterSpecs(...)) or inside a container.
//
// harness and opts are called once, when the container starts running, so they may return
// values set up in BeforeSuite (a fleet, a host cluster). Every spec is labeled
// "conformance", its ID and its feature ("Feature:Core", "Feature:Scale", ...), so `ginkgo
// --label-filter` can pick tests. The container's AfterAll adds the markdown summary as a
// report entry (printed with the suite's output) and writes the YAML report as Run does.
func RegisterSpecs(harness func() Harness, opts func() Options) bool {
	return registerSpecs(harness, opts, time.Time{}, func(r *Report) {
		ginkgo.AddReportEntry("conformance summary", r.Markdown())
	})
}

// Assess runs the whole suite against the provider behind h without Ginkgo and without failing
// any test, and returns the report (its Tests hold every result). It is for assessing providers
// you do not own, whose known failures you pin instead of failing on, and for running several
// providers, or one under several managers, in one test binary (Run allows one suite per
// binary). logf receives the suite's progress lines (t.Logf will do). Like Run, it writes the
// YAML report to Options.ReportPath, if set.
func Assess(ctx context.Context, h Harness, o Options, logf func(format string, args ...any)) (*Report, error) {
	if h == nil {
		return nil, errors.New("conformance: Assess: nil harness")
	}
	r, err := newSuiteRun(h, o)
	if err != nil {
		return nil, err
	}
	if deadline, ok := ctx.Deadline(); ok {
		r.limitTo(deadline)
	}
	r.runAll(ctx, logf)
	rep, err := r.finish()
	r.printSummary(rep, err)
	return rep, err
}

// registerSpecs registers the specs; emit receives the report at the end. The run ends
// RunReserve before testDeadline, if not zero.
func registerSpecs(harness func() Harness, opts func() Options, testDeadline time.Time, emit func(*Report)) bool {
	return ginkgo.Describe("mcr provider conformance", ginkgo.Ordered, ginkgo.ContinueOnFailure, func() {
		var run *suiteRun
		ginkgo.BeforeAll(func() {
			h, o := harness(), opts()
			if h == nil {
				ginkgo.Fail("conformance: RegisterSpecs: the harness function returned nil")
			}
			var err error
			run, err = newSuiteRun(h, o)
			if err != nil {
				ginkgo.Fail(err.Error())
			}
			run.limitTo(testDeadline)
		})
		for _, test := range catalog {
			labels := ginkgo.Label("conformance", "ID:"+test.ID, "Feature:"+string(test.Feature))
			ginkgo.It(fmt.Sprintf("%s: %s", test.ID, test.Must), labels, func(ctx ginkgo.SpecContext) {
				logf := func(format string, args ...any) {
					_, _ = fmt.Fprintf(ginkgo.GinkgoWriter, format+"\n", args...)
				}
				res := run.runTest(ctx, test, logf)
				switch res.Result {
				case Failed:
					ginkgo.Fail(fmt.Sprintf("%s failed: %s", test.ID, res.Message))
				case Errored:
					ginkgo.Fail(fmt.Sprintf("%s errored (the harness could not decide): %s", test.ID, res.Message))
				case Skipped, NotSupported:
					ginkgo.Skip(fmt.Sprintf("%s %s: %s", test.ID, res.Result, res.Message))
				}
			})
		}
		ginkgo.AfterAll(func() {
			if run == nil {
				return
			}
			report, err := run.finish()
			run.printSummary(report, err)
			emit(report)
			if err != nil {
				ginkgo.Fail(err.Error())
			}
		})
	})
}

// selected reports whether the options run test t, and if not, with which result and why.
func (o Options) selected(t Test) (Result, string, bool) {
	if len(o.Only) > 0 && !slices.Contains(o.Only, t.ID) {
		return Skipped, "not in Options.Only", false
	}
	if slices.Contains(o.Skip, t.ID) {
		return Skipped, "listed in Options.Skip", false
	}
	if !o.claims(t.Feature) {
		return NotSupported, fmt.Sprintf("the provider does not claim feature %s", t.Feature), false
	}
	return "", "", true
}
