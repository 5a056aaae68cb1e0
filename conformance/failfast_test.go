// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package conformance_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"mcr.dev/conformance"
	"mcr.dev/conformance/internal/reference"
)

// failFastLimit is how long the whole suite may take, with the default timeouts, against a
// provider whose engage contexts die at once. Without the root-cause checks each dependent test
// waited out Timeouts.Engage (2 minutes) and the run took over half an hour.
const failFastLimit = 4 * time.Minute

// TestBrokenProviderFailsFast runs every test, with the default timeouts, against SyncContext,
// the provider of issue 14 (it engages with a sync context canceled on return): the run must
// end quickly, each failure must name the root cause, and the report must be written.
func TestBrokenProviderFailsFast(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "report.yaml")
	o := conformance.Options{
		Features:      referenceFeatures(),
		ManagerConfig: fleet.Member("host").Config(),
		ScaleMembers:  12,
		ReportPath:    path,
	}
	h := reference.NewHarness(newFleet(), reference.Faults{SyncContext: true})
	start := time.Now()
	results, rep, err := conformance.RunTests(t.Context(), h, o, func(string, ...any) {})
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("SyncContext with default timeouts: %s\n%s", elapsed.Round(time.Second), rep.Markdown())
	if elapsed > failFastLimit {
		t.Errorf("the run took %s, want under %s", elapsed.Round(time.Second), failFastLimit)
	}
	b := brokenProvider{name: "SyncContext", catches: "default timeouts", cause: "the engage context of", mayFail: syncContextMayFail}
	checkBroken(t, b, results, syncContextFails)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no report written: %v", err)
	}
	if err := conformance.Verify(data); err != nil {
		t.Errorf("the report does not verify: %v", err)
	}
}

// TestRunBudget: when Timeouts.Run runs out, the test running is interrupted ("errored"), the
// rest are skipped, and the report is still written, marked incomplete, and verifies.
func TestRunBudget(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "report.yaml")
	o := selfTestOptions(conformance.ModeDirect, true)
	o.Timeouts.Engage = time.Minute
	o.Timeouts.Run = 8 * time.Second
	o.ReportPath = path
	h := reference.NewHarness(newFleet(), reference.Faults{NeverEngage: true})
	start := time.Now()
	results, _, err := conformance.RunTests(t.Context(), h, o, t.Logf)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("run with an 8s budget ended after %s", elapsed.Round(100*time.Millisecond))
	if elapsed > 40*time.Second {
		t.Errorf("the run took %s, want it to end soon after its 8s budget", elapsed)
	}
	if r := results[0]; r.Result != conformance.Errored || !strings.Contains(r.Message, "time budget ran out") {
		t.Errorf("%s: %s (%s), want errored by the end of the budget", r.ID, r.Result, r.Message)
	}
	for _, r := range results[1:] {
		if r.Result != conformance.Skipped && r.Result != conformance.NotSupported {
			t.Errorf("%s: %s (%s), want skipped after the budget ran out", r.ID, r.Result, r.Message)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no report written: %v", err)
	}
	if err := conformance.Verify(data); err != nil {
		t.Errorf("the report does not verify: %v", err)
	}
	var rep conformance.Report
	if err := yaml.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rep.Summary.Incomplete, "time budget ran out") || rep.Summary.Result != conformance.Failure {
		t.Errorf("summary %+v, want a failure marked incomplete", rep.Summary)
	}
	if !strings.Contains(rep.Markdown(), "Incomplete run, partial results") {
		t.Errorf("the markdown summary does not say the run is incomplete:\n%s", rep.Markdown())
	}
}

// TestScaleStopsWaitingForAStalledProvider: a provider that stops engaging beyond a number of
// members fails ScaleEngageDisengage once no member was engaged for Timeouts.Engage, naming
// that, instead of waiting out the whole Timeouts.Scale.
func TestScaleStopsWaitingForAStalledProvider(t *testing.T) {
	t.Parallel()
	o := selfTestOptions(conformance.ModeDirect, true)
	o.Timeouts.Scale = 30 * time.Minute // never reached: the test would time out first
	h := reference.NewHarness(newFleet(), reference.Faults{MaxClusters: 4})
	res, err := conformance.RunTest(t.Context(), h, o, conformance.ScaleEngageDisengage, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if res.Result != conformance.Failed || !strings.Contains(res.Message, "the provider stopped") {
		t.Errorf("ScaleEngageDisengage: %s (%s), want failed because the provider stopped engaging", res.Result, res.Message)
	}
}

// TestPaceBoundsWaits: once the provider has engaged members, a wait for it to act fails after
// ten times its slowest engagement (at least 30 seconds), naming that, instead of waiting out
// Timeouts.Engage: a provider that never engages a member again once it was unready fails
// ReengageWhenReady within about 30 seconds although Timeouts.Engage is half an hour.
func TestPaceBoundsWaits(t *testing.T) {
	t.Parallel()
	o := selfTestOptions(conformance.ModeDirect, true)
	o.Timeouts.Engage = 30 * time.Minute // never reached: the test would time out first
	o.Only = []string{conformance.EngageOnAdd, conformance.ReengageWhenReady}
	h := reference.NewHarness(newFleet(), reference.Faults{NoReengageWhenReady: true})
	results, _, err := conformance.RunTests(t.Context(), h, o, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range results {
		switch res.ID {
		case conformance.EngageOnAdd:
			if res.Result != conformance.Passed {
				t.Errorf("EngageOnAdd: %s (%s), want passed", res.Result, res.Message)
			}
		case conformance.ReengageWhenReady:
			if res.Result != conformance.Failed || !strings.Contains(res.Message, "while the provider engaged every member so far within") {
				t.Errorf("ReengageWhenReady: %s (%s), want failed naming the provider's pace", res.Result, res.Message)
			}
		}
	}
}
