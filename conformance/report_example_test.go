// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package conformance_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"mcr.dev/conformance"
	"mcr.dev/conformance/internal/reference"
)

// reportExample is the example report docs/conformance.md shows (quoted whole through a
// snippet marker). It is the report of a real run of the reference provider claiming two
// features, written by
//
//	MCR_CONFORMANCE_WRITE_DOCS=1 go test -race -run '^TestReportExample$' .
//
// in conformance/ (about two minutes), after which `make docs` copies it into the page.
const reportExample = "testdata/report-example.yaml"

// reportExamplePage is the page that shows it, and the marker above the block.
const (
	reportExamplePage   = "../docs/conformance.md"
	reportExampleMarker = "<!-- snippet: conformance/" + reportExample + " -->"
)

// TestReportExample checks that the report the docs show is one Verify accepts: the text of
// the page's block itself, which must also equal the file a real run wrote.
func TestReportExample(t *testing.T) {
	if os.Getenv(writeDocsEnv) == "1" {
		writeReportExample(t)
	}
	file, err := os.ReadFile(reportExample)
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(reportExamplePage)
	if err != nil {
		t.Fatal(err)
	}
	shown, ok := blockAfter(string(page), reportExampleMarker)
	if !ok {
		t.Fatalf("%s has no code block right after %s", reportExamplePage, reportExampleMarker)
	}
	if err := conformance.Verify([]byte(shown)); err != nil {
		t.Errorf("the report %s shows does not verify: %v", reportExamplePage, err)
	}
	if shown != strings.TrimRight(string(file), "\n")+"\n" {
		t.Errorf("the report %s shows differs from %s: run `make docs`", reportExamplePage, reportExample)
	}
}

// blockAfter returns the lines of the fenced code block right below marker.
func blockAfter(page, marker string) (string, bool) {
	lines := strings.Split(page, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != marker || i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "```") {
			continue
		}
		var b strings.Builder
		for _, l := range lines[i+2:] {
			if strings.HasPrefix(l, "```") {
				return b.String(), true
			}
			b.WriteString(l + "\n")
		}
	}
	return "", false
}

// writeReportExample runs the reference provider with two features claimed and writes its
// report to reportExample.
func writeReportExample(t *testing.T) {
	o := selfTestOptions(conformance.ModeDirect, false)
	o.Features = []conformance.Feature{conformance.CredentialRotation, conformance.Scale}
	o.Implementation = conformance.Implementation{
		Organization: "mcr",
		Project:      "mcr.dev/conformance/internal/reference",
		Version:      "the suite's self-test",
	}
	_, rep, err := conformance.RunTests(t.Context(), reference.NewHarness(newFleet(), reference.Faults{}), o, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	data, err := rep.YAML()
	if err != nil {
		t.Fatal(err)
	}
	if rep.Summary.Result != conformance.Success {
		t.Fatalf("the reference provider's run is %s, not an example to show:\n%s", rep.Summary.Result, rep.Markdown())
	}
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(reportExample, append(bytes.TrimRight(data, "\n"), '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s; run `make docs` to copy it into %s", reportExample, reportExamplePage)
}
