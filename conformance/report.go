// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// Report identity: the apiVersion and kind every report carries.
const (
	ReportAPIVersion = "conformance.mcr.dev/v1alpha1"
	ReportKind       = "ProviderConformanceReport"
)

// Outcome of a group of tests (core, extended, overall).
type Outcome string

const (
	// Success means every test that ran passed and none was skipped.
	Success Outcome = "success"
	// Partial means nothing failed, but some tests were skipped; not a conformance claim.
	Partial Outcome = "partial"
	// Failure means some test failed or errored.
	Failure Outcome = "failure"
)

// Report is the machine-readable result of a conformance run. Its YAML form (lowerCamel keys)
// is what providers publish; Verify checks one.
type Report struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Date       string `json:"date"`
	Mode       Mode   `json:"mode"`
	// Manager is the package of the manager the provider ran under in ModeManager (by default
	// mcr.dev/core/manager); empty in ModeDirect.
	Manager        string         `json:"manager,omitempty"`
	Suite          SuiteInfo      `json:"suite"`
	Implementation Implementation `json:"implementation"`
	Features       FeatureClaims  `json:"features"`
	Summary        Summary        `json:"summary"`
	// Tests lists every test of the suite, in suite order, with its result.
	Tests []TestResult `json:"tests"`
}

// SuiteInfo records what ran the tests. Module versions come from the test binary's build
// information and, for modules it lacks (a go.work workspace lists only the main module), from
// `go list -m` in the tested package's directory. A module without a version (a workspace
// module, or a replacement by a directory) is reported as "(devel) <directory>" with the git
// commit of that directory when it is a checkout. Verify rejects a report that lacks any of them.
type SuiteInfo struct {
	// Version of the suite (the constant Version of mcr.dev/conformance).
	Version string `json:"version"`
	// Module is the mcr.dev/conformance module the test binary was built with.
	Module string `json:"module,omitempty"`
	// Tests is how many tests the suite has.
	Tests               int    `json:"tests"`
	Core                string `json:"core,omitempty"`
	MulticlusterRuntime string `json:"multiclusterRuntime,omitempty"`
	ControllerRuntime   string `json:"controllerRuntime,omitempty"`
	ClientGo            string `json:"clientGo,omitempty"`
	Go                  string `json:"go"`
	// VersionsFrom says where the module versions were read: "build info", or "build info and
	// go list -m".
	VersionsFrom string `json:"versionsFrom,omitempty"`
	// Race says whether the test binary was built with the race detector (ConcurrentGet is
	// only meaningful with it).
	Race bool `json:"race"`
}

// FeatureClaims lists which extended features the provider claimed.
type FeatureClaims struct {
	Claimed    []Feature `json:"claimed"`
	NotClaimed []Feature `json:"notClaimed"`
}

// Summary is the outcome overall and per group of tests.
type Summary struct {
	// Result is Failure if any test failed or errored, Partial if a core test or a test of a
	// claimed feature was skipped, Success otherwise.
	Result   Outcome    `json:"result"`
	Core     Statistics `json:"core"`
	Extended Statistics `json:"extended"`
	// Incomplete, when set, says why the run ended before every test ran (its time budget,
	// Timeouts.Run, ran out): the results are partial.
	Incomplete string `json:"incomplete,omitempty"`
}

// Statistics counts the results of a group of tests.
type Statistics struct {
	Result       Outcome `json:"result"`
	Passed       int     `json:"passed"`
	Failed       int     `json:"failed"`
	Errored      int     `json:"errored"`
	Skipped      int     `json:"skipped"`
	NotSupported int     `json:"notSupported"`
}

func (st *Statistics) add(r Result) {
	switch r {
	case Passed:
		st.Passed++
	case Failed:
		st.Failed++
	case Errored:
		st.Errored++
	case Skipped:
		st.Skipped++
	case NotSupported:
		st.NotSupported++
	}
}

func (st Statistics) outcome() Outcome {
	switch {
	case st.Failed+st.Errored > 0:
		return Failure
	case st.Skipped > 0:
		return Partial
	}
	return Success
}

// report builds the report of the run so far.
func (r *suiteRun) report() *Report {
	r.mu.Lock()
	results := make([]TestResult, 0, len(catalog))
	for _, t := range catalog {
		results = append(results, r.results[t.ID])
	}
	incomplete, mgr := r.incomplete, r.manager
	r.mu.Unlock()
	rep := newReport(r.opts, results, r.started)
	rep.Summary.Incomplete = incomplete
	rep.Manager = mgr
	return rep
}

// finish builds the report of the run and writes it to Options.ReportPath, if set.
func (r *suiteRun) finish() (*Report, error) {
	rep := r.report()
	if path := r.opts.ReportPath; path != "" {
		if err := rep.WriteFile(path); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

func newReport(o Options, results []TestResult, date time.Time) *Report {
	rep := &Report{
		APIVersion:     ReportAPIVersion,
		Kind:           ReportKind,
		Date:           date.UTC().Format(time.RFC3339),
		Mode:           o.Mode,
		Suite:          suiteInfo(),
		Implementation: o.Implementation,
		Features:       FeatureClaims{Claimed: []Feature{}, NotClaimed: []Feature{}},
		Tests:          results,
	}
	if rep.Implementation.Module == "" {
		rep.Implementation.Module = testedModule()
	}
	for _, f := range ExtendedFeatures() {
		if o.claims(f) {
			rep.Features.Claimed = append(rep.Features.Claimed, f)
		} else {
			rep.Features.NotClaimed = append(rep.Features.NotClaimed, f)
		}
	}
	rep.Summary = summarize(results)
	return rep
}

func summarize(results []TestResult) Summary {
	var s Summary
	for _, t := range results {
		if t.Feature == Core {
			s.Core.add(t.Result)
		} else {
			s.Extended.add(t.Result)
		}
	}
	s.Core.Result, s.Extended.Result = s.Core.outcome(), s.Extended.outcome()
	s.Result = Success
	for _, o := range []Outcome{s.Core.Result, s.Extended.Result} {
		if o == Failure || (o == Partial && s.Result == Success) {
			s.Result = o
		}
	}
	return s
}

// YAML returns the report as YAML.
func (rep *Report) YAML() ([]byte, error) {
	return yaml.Marshal(rep)
}

// WriteFile writes the report as YAML to path, creating its directory.
func (rep *Report) WriteFile(path string) error {
	data, err := rep.YAML()
	if err != nil {
		return fmt.Errorf("conformance: encoding the report: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("conformance: writing the report: %w", err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("conformance: writing the report: %w", err)
	}
	return nil
}

// Markdown returns the human-readable summary: the outcome and a table of every test.
func (rep *Report) Markdown() string {
	var b strings.Builder
	name := strings.TrimSpace(rep.Implementation.Project + " " + rep.Implementation.Version)
	if name == "" {
		name = "provider"
	}
	mode := string(rep.Mode) + " mode"
	if rep.Manager != "" {
		mode += ", " + rep.Manager
	}
	fmt.Fprintf(&b, "### mcr provider conformance: %s (%s): %s\n\n", name, mode, rep.Summary.Result)
	fmt.Fprintf(&b, "Core: %s. Extended: %s.\n\n", statLine(rep.Summary.Core), statLine(rep.Summary.Extended))
	if rep.Summary.Incomplete != "" {
		fmt.Fprintf(&b, "**Incomplete run, partial results**: %s.\n\n", rep.Summary.Incomplete)
	}
	fmt.Fprintf(&b, "Suite %s (module %s), core %s, multicluster-runtime %s, controller-runtime %s, client-go %s, %s, race detector %t.\n\n",
		rep.Suite.Version, rep.Suite.Module, rep.Suite.Core, rep.Suite.MulticlusterRuntime, rep.Suite.ControllerRuntime,
		rep.Suite.ClientGo, rep.Suite.Go, rep.Suite.Race)
	b.WriteString("| Test | Feature | Result | Seconds | Note |\n|---|---|---|---|---|\n")
	for _, t := range rep.Tests {
		note := strings.ReplaceAll(noteOf(t.Message), "|", `\|`)
		if t.Result == Passed {
			note = ""
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %.1f | %s |\n", t.ID, t.Feature, t.Result, t.DurationSeconds, note)
	}
	return b.String()
}

// noteOf is the one line that stands for a failure message: the root cause, when the suite
// found one, says more than the symptom.
func noteOf(msg string) string {
	if strings.HasPrefix(msg, dependencySkipPrefix) {
		return firstLine(msg)
	}
	if i := strings.Index(msg, "root cause: "); i >= 0 {
		msg = msg[i:]
	}
	return firstLine(msg)
}

func statLine(st Statistics) string {
	parts := []string{string(st.Result)}
	for _, c := range []struct {
		n    int
		what string
	}{{st.Passed, "passed"}, {st.Failed, "failed"}, {st.Errored, "errored"}, {st.Skipped, "skipped"}, {st.NotSupported, "not supported"}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	return parts[0] + " (" + strings.Join(parts[1:], ", ") + ")"
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	const maxLen = 160
	if len(s) > maxLen {
		s = s[:maxLen] + "…"
	}
	return s
}

// Verify checks a YAML report against this suite's list of tests: identity, every test listed
// exactly once with the feature the suite gives it and a known result, feature claims
// consistent with the results, and statistics and outcomes that add up. It returns every
// problem found, joined; nil means the report is consistent.
func Verify(data []byte) error {
	var rep Report
	if err := yaml.UnmarshalStrict(data, &rep); err != nil {
		return fmt.Errorf("conformance: not a report: %w", err)
	}
	var problems []string
	addf := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	if rep.APIVersion != ReportAPIVersion || rep.Kind != ReportKind {
		addf("apiVersion/kind is %q/%q, want %q/%q", rep.APIVersion, rep.Kind, ReportAPIVersion, ReportKind)
	}
	if _, err := time.Parse(time.RFC3339, rep.Date); err != nil {
		addf("date %q is not RFC 3339", rep.Date)
	}
	if rep.Mode != ModeDirect && rep.Mode != ModeManager {
		addf("mode %q is neither %q nor %q", rep.Mode, ModeDirect, ModeManager)
	}
	claimed := map[Feature]bool{Core: true}
	for _, f := range rep.Features.Claimed {
		if !slices.Contains(ExtendedFeatures(), f) {
			addf("features.claimed lists unknown feature %q", f)
		}
		claimed[f] = true
	}
	for _, f := range ExtendedFeatures() {
		if claimed[f] == slices.Contains(rep.Features.NotClaimed, f) {
			addf("feature %q must be listed in exactly one of features.claimed and features.notClaimed", f)
		}
	}

	seen := map[string]int{}
	for i, tr := range rep.Tests {
		seen[tr.ID]++
		want, ok := testByID(tr.ID)
		if !ok {
			addf("tests[%d]: unknown test ID %q", i, tr.ID)
			continue
		}
		if tr.Feature != want.Feature {
			addf("test %s: feature %q, the suite says %q", tr.ID, tr.Feature, want.Feature)
		}
		if !slices.Contains(Results(), tr.Result) {
			addf("test %s: unknown result %q", tr.ID, tr.Result)
		}
		switch {
		case tr.Result == NotSupported && claimed[want.Feature]:
			addf("test %s: notSupported although its feature %s is claimed", tr.ID, want.Feature)
		case tr.Result != NotSupported && tr.Result != Skipped && !claimed[want.Feature]:
			addf("test %s: result %s although its feature %s is not claimed", tr.ID, tr.Result, want.Feature)
		}
	}
	for _, t := range catalog {
		switch seen[t.ID] {
		case 0:
			addf("test %s is missing", t.ID)
		case 1:
		default:
			addf("test %s is listed %d times", t.ID, seen[t.ID])
		}
	}
	for _, v := range []struct{ field, value string }{
		{"suite.version", rep.Suite.Version},
		{"suite.module", rep.Suite.Module},
		{"suite.core", rep.Suite.Core},
		{"suite.multiclusterRuntime", rep.Suite.MulticlusterRuntime},
		{"suite.controllerRuntime", rep.Suite.ControllerRuntime},
		{"suite.clientGo", rep.Suite.ClientGo},
		{"suite.go", rep.Suite.Go},
		{"implementation.module", rep.Implementation.Module},
	} {
		if v.value == "" || strings.HasPrefix(v.value, "unknown") {
			addf("%s is missing (%q): a report must say which versions produced it; the suite reads them from the build information or `go list -m` in the tested package's directory (run it with go test, from the provider's module or workspace)", v.field, v.value)
		}
	}
	if rep.Suite.Tests != len(catalog) {
		addf("suite.tests is %d, this suite has %d tests", rep.Suite.Tests, len(catalog))
	}
	want := summarize(rep.Tests)
	want.Incomplete = rep.Summary.Incomplete
	if rep.Summary != want {
		addf("summary %+v does not match the test results, which give %+v", rep.Summary, want)
	}
	if len(problems) > 0 {
		return fmt.Errorf("conformance: the report has %d problem(s):\n- %s", len(problems), strings.Join(problems, "\n- "))
	}
	return nil
}

// TestsMarkdown renders the list of tests as the page docs/conformance-tests.md; `go
// generate` writes it and a test checks that the checked-in page matches.
func TestsMarkdown() string {
	var b bytes.Buffer
	b.WriteString("<!-- Generated by `go generate` in conformance/ from the suite's list of tests. Do not edit. -->\n\n")
	b.WriteString("# Conformance tests\n\n")
	b.WriteString("Every test of the provider conformance suite (`mcr.dev/conformance`), in the order it runs, with the\n")
	b.WriteString("rule it enforces and the feature it needs. Core tests apply to every provider; the tests of an extended\n")
	b.WriteString("feature run only when the provider claims the feature and are reported `notSupported` otherwise. How to\n")
	b.WriteString("run the suite: [conformance.md](conformance.md).\n\n")
	b.WriteString("| ID | Feature | Rule |\n|---|---|---|\n")
	for _, t := range catalog {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", t.ID, t.Feature, t.Must)
	}
	b.WriteString("\nFeatures:\n\n")
	for _, f := range []struct {
		f    Feature
		what string
	}{
		{Core, "what every provider must do."},
		{CredentialRotation, "re-engage with new credentials; the harness implements `CredentialRotator`."},
		{InPlaceCredentialRefresh, "instead of re-engaging, keep the engagement and its cache and switch to the new credentials (claimed with `CredentialRotation`); a server change still re-engages. The harness also implements `ServerMover`."},
		{MemberReadiness, "disengage unready members, re-engage ready ones; the harness implements `ReadinessToggler`."},
		{EngageErrorRecovery, "retry after a failed Engage (the suite's probe fails the first Engage of a member)."},
		{Scale, "engage and disengage `Options.ScaleMembers` (default 30) members at once."},
	} {
		fmt.Fprintf(&b, "- `%s`: %s\n", f.f, f.what)
	}
	return b.String()
}
