// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package conformance_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"mcr.dev/conformance"
)

// The table of broken providers in docs/conformance.md is generated from brokenProviders, so
// that the page names every variant and exactly the tests it must fail.
const (
	brokenTableBegin = "<!-- begin generated: brokenProviders of conformance/selftest_test.go; MCR_CONFORMANCE_WRITE_DOCS=1 go test -run '^TestBrokenProvidersDocumented$' . in conformance/ rewrites it -->"
	brokenTableEnd   = "<!-- end generated -->"
)

// writeDocsEnv, set to 1, makes the docs tests rewrite what they check instead of failing.
const writeDocsEnv = "MCR_CONFORMANCE_WRITE_DOCS"

// TestBrokenProvidersDocumented fails when the table of broken providers in
// docs/conformance.md differs from brokenProviders.
func TestBrokenProvidersDocumented(t *testing.T) {
	data, err := os.ReadFile(reportExamplePage)
	if err != nil {
		t.Fatal(err)
	}
	page := string(data)
	begin := strings.Index(page, brokenTableBegin)
	end := strings.Index(page, brokenTableEnd)
	if begin < 0 || end < begin {
		t.Fatalf("%s has no region between %q and %q", reportExamplePage, brokenTableBegin, brokenTableEnd)
	}
	begin += len(brokenTableBegin)
	want := "\n" + brokenProvidersTable() + brokenTableEnd
	if page[begin:end+len(brokenTableEnd)] == want {
		return
	}
	if os.Getenv(writeDocsEnv) == "1" {
		page = page[:begin] + want + page[end+len(brokenTableEnd):]
		if err := os.WriteFile(reportExamplePage, []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote the table of broken providers in %s", reportExamplePage)
		return
	}
	t.Errorf("the table of broken providers in %s differs from brokenProviders: run %s=1 go test -run '^TestBrokenProvidersDocumented$' . in conformance/",
		reportExamplePage, writeDocsEnv)
}

// brokenProvidersTable renders brokenProviders as a markdown table.
func brokenProvidersTable() string {
	var b strings.Builder
	b.WriteString("| Broken provider | Its bug | Fails |\n|---|---|---|\n")
	for _, p := range brokenProviders {
		name := p.name
		if p.manager {
			name += " (also in manager mode)"
		}
		fails := testList(p.fails)
		if p.cause != "" {
			fails += fmt.Sprintf("; every message names the root cause (%q)", p.cause)
		}
		if len(p.mayFail) > 0 {
			fails += "; depending on timing, also " + testList(p.mayFail)
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", name, p.catches, fails)
	}
	return b.String()
}

// testList names tests; a list of most of the suite is written as the tests it leaves out.
func testList(ids []string) string {
	all := conformance.Tests()
	if len(ids) <= len(all)/2 {
		return strings.Join(ids, ", ")
	}
	var out []string
	for _, test := range all {
		if !slices.Contains(ids, test.ID) {
			out = append(out, test.ID)
		}
	}
	if len(out) == 0 {
		return "every test"
	}
	return "every test but " + strings.Join(out, ", ")
}
