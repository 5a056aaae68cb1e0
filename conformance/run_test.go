// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package conformance_test

import (
	"os"
	"path/filepath"
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

	conformance.Run(t, reference.NewHarness(newFleet(), reference.Faults{}), o)

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
