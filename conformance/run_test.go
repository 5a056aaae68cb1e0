// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package conformance_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"sigs.k8s.io/yaml"

	"mcr.dev/conformance"
	"mcr.dev/conformance/internal/reference"
)

// TestRun goes through the plain `go test` entry point, Run, which owns this binary's Ginkgo
// suite: a few tests run, one is not supported, the rest are skipped, and the report file it
// writes verifies.
func TestRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "report.yaml")
	o := selfTestOptions(conformance.ModeDirect, false)
	o.Features = []conformance.Feature{conformance.CredentialRotation}
	o.Only = []string{conformance.EngageOnAdd, conformance.GetReturnsEngaged, conformance.NotFoundForUnknown,
		conformance.ReengageOnCredentialRotation, conformance.ScaleEngageDisengage}
	o.ReportPath = path
	o.Implementation = conformance.Implementation{Organization: "mcr", Project: "reference", Version: "v0.0.0-test"}
	var out lockedBuffer
	o.Output = &out

	conformance.Run(t, reference.NewHarness(newFleet(), reference.Faults{}), o)

	// What a person running it sees without -v: a line per test, the table, the report's path.
	progress := out.String()
	t.Logf("output:\n%s", progress)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^conformance \[ 1/\d+\] EngageOnAdd +passed +\d+\.\ds$`),
		regexp.MustCompile(`(?m)^conformance \[\d+/\d+\] ScaleEngageDisengage +notSupported +0\.0s$`),
		regexp.MustCompile(`(?m)^\| ReengageOnCredentialRotation \| CredentialRotation \| passed \|`),
		regexp.MustCompile(`(?m)^Report written to ` + regexp.QuoteMeta(path)),
	} {
		if !want.MatchString(progress) {
			t.Errorf("the output has no line matching %s", want)
		}
	}
	if n := strings.Count(progress, "\nconformance ["); n != len(conformance.Tests())-1 {
		t.Errorf("%d progress lines after the first, want one per test (%d)", n, len(conformance.Tests()))
	}

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := conformance.Verify(data); err != nil {
		t.Fatalf("the report written by Run does not verify: %v\n%s", err, data)
	}
	var rep conformance.Report
	if err := yaml.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	want := map[string]conformance.Result{
		conformance.EngageOnAdd:                  conformance.Passed,
		conformance.GetReturnsEngaged:            conformance.Passed,
		conformance.NotFoundForUnknown:           conformance.Passed,
		conformance.ReengageOnCredentialRotation: conformance.Passed,
		conformance.ScaleEngageDisengage:         conformance.NotSupported,
		conformance.CleanStop:                    conformance.Skipped,
	}
	for _, tr := range rep.Tests {
		if w, ok := want[tr.ID]; ok && tr.Result != w {
			t.Errorf("%s: %s, want %s (%s)", tr.ID, tr.Result, w, tr.Message)
		}
	}
	if rep.Summary.Result != conformance.Partial {
		t.Errorf("summary result %s, want %s (core tests were skipped)", rep.Summary.Result, conformance.Partial)
	}
	if rep.Implementation.Project != "reference" || rep.Suite.Race != raceEnabled {
		t.Errorf("report metadata: %+v %+v", rep.Implementation, rep.Suite)
	}
}

// TestProgressNamesTheFailure: a failed test's progress line carries the first line of its
// failure, and a run without a report file says how to get one.
func TestProgressNamesTheFailure(t *testing.T) {
	o := selfTestOptions(conformance.ModeDirect, true)
	o.Only = []string{conformance.NotFoundForUnknown}
	var out lockedBuffer
	o.Output = &out
	rep, err := conformance.Assess(t.Context(), reference.NewHarness(newFleet(), reference.Faults{NilBeforeStart: true}), o, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	var msg string
	for _, tr := range rep.Tests {
		if tr.ID == conformance.NotFoundForUnknown {
			msg = tr.Message
		}
	}
	if msg == "" {
		t.Fatalf("NotFoundForUnknown did not fail: %+v", rep.Tests)
	}
	progress := out.String()
	t.Logf("output:\n%s", progress)
	first, _, _ := strings.Cut(msg, "\n")
	line := regexp.MustCompile(`(?m)^conformance \[ *\d+/\d+\] NotFoundForUnknown +failed +\d+\.\ds  (.*)$`).FindStringSubmatch(progress)
	if len(line) < 2 || line[1] != first {
		t.Errorf("no progress line for the failure with its first line %q", first)
	}
	if !strings.Contains(progress, "No report file written: set Options.ReportPath or "+conformance.ReportEnv) {
		t.Error("the output does not say that no report file was written")
	}
}

// lockedBuffer is an io.Writer safe for the suite's goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
