// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package conformance_test

import (
	"flag"
	"os"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"mcr.dev/conformance"
)

// TestDocsInSync fails when docs/conformance-tests.md differs from what the suite generates;
// `go generate ./...` in conformance/ (or `make generate`) rewrites it.
func TestDocsInSync(t *testing.T) {
	data, err := os.ReadFile("../docs/conformance-tests.md")
	if err != nil {
		t.Fatalf("reading the generated docs: %v (run `go generate ./...` in conformance/)", err)
	}
	if string(data) != conformance.TestsMarkdown() {
		t.Errorf("docs/conformance-tests.md is out of date: run `go generate ./...` in conformance/ (or `make generate`)")
	}
}

// TestNoFlags checks that importing the suite registers no flags of its own: only the testing
// package's and Ginkgo's own (prefixed "ginkgo.") are allowed.
func TestNoFlags(t *testing.T) {
	flag.VisitAll(func(f *flag.Flag) {
		if !strings.HasPrefix(f.Name, "test.") && !strings.HasPrefix(f.Name, "ginkgo.") {
			t.Errorf("flag %q is registered by an import of the suite", f.Name)
		}
	})
}

func TestTestsHaveStableShape(t *testing.T) {
	seen := map[string]bool{}
	for _, test := range conformance.Tests() {
		if seen[test.ID] {
			t.Errorf("test ID %s appears twice", test.ID)
		}
		seen[test.ID] = true
		if !strings.Contains(test.Must, "MUST") {
			t.Errorf("%s: the rule %q has no MUST", test.ID, test.Must)
		}
		if strings.Contains(test.Must, "\n") {
			t.Errorf("%s: the rule must be one line", test.ID)
		}
		if test.Feature == "" {
			t.Errorf("%s: no feature", test.ID)
		}
	}
}

// validReport returns the YAML of a consistent report in which every test passed or is not
// supported, claiming CredentialRotation.
func validReport(t *testing.T) map[string]any {
	t.Helper()
	var tests []any
	core, ext := map[string]any{"result": "success", "passed": 0, "failed": 0, "errored": 0, "skipped": 0, "notSupported": 0},
		map[string]any{"result": "success", "passed": 0, "failed": 0, "errored": 0, "skipped": 0, "notSupported": 0}
	for _, test := range conformance.Tests() {
		result := "passed"
		if test.Feature != conformance.Core && test.Feature != conformance.CredentialRotation {
			result = "notSupported"
		}
		stats := core
		if test.Feature != conformance.Core {
			stats = ext
		}
		stats[result] = stats[result].(int) + 1
		tests = append(tests, map[string]any{"id": test.ID, "feature": string(test.Feature), "result": result, "durationSeconds": 1.5})
	}
	var notClaimed []any
	for _, f := range conformance.ExtendedFeatures() {
		if f != conformance.CredentialRotation {
			notClaimed = append(notClaimed, string(f))
		}
	}
	return map[string]any{
		"apiVersion": conformance.ReportAPIVersion, "kind": conformance.ReportKind,
		"date": time.Now().UTC().Format(time.RFC3339), "mode": "direct",
		"suite": map[string]any{"version": "v0.1.0", "module": "v0.1.0", "tests": len(conformance.Tests()), "core": "v0.1.0",
			"multiclusterRuntime": "v0.24.1", "controllerRuntime": "v0.24.1", "clientGo": "v0.36.3", "go": "go1.26", "race": true},
		"implementation": map[string]any{"project": "acme", "module": "example.com/acme v1.0.0"},
		"features":       map[string]any{"claimed": []any{"CredentialRotation"}, "notClaimed": notClaimed},
		"summary":        map[string]any{"result": "success", "core": core, "extended": ext},
		"tests":          tests,
	}
}

func encode(t *testing.T, v any) []byte {
	t.Helper()
	data, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestVerify(t *testing.T) {
	if err := conformance.Verify(encode(t, validReport(t))); err != nil {
		t.Fatalf("a consistent report does not verify: %v", err)
	}
	cases := map[string]struct {
		change func(r map[string]any)
		want   string
	}{
		"missing test": {func(r map[string]any) {
			r["tests"] = r["tests"].([]any)[1:]
		}, "is missing"},
		"duplicate test": {func(r map[string]any) {
			r["tests"] = append(r["tests"].([]any), r["tests"].([]any)[0])
		}, "listed 2 times"},
		"unknown test": {func(r map[string]any) {
			r["tests"] = append(r["tests"].([]any), map[string]any{"id": "Invented", "feature": "Core", "result": "passed", "durationSeconds": 0})
		}, "unknown test ID"},
		"wrong feature": {func(r map[string]any) {
			r["tests"].([]any)[0].(map[string]any)["feature"] = "Scale"
		}, "the suite says"},
		"unknown result": {func(r map[string]any) {
			r["tests"].([]any)[0].(map[string]any)["result"] = "great"
		}, "unknown result"},
		"claimed feature not supported": {func(r map[string]any) {
			for _, x := range r["tests"].([]any) {
				if x.(map[string]any)["feature"] == "CredentialRotation" {
					x.(map[string]any)["result"] = "notSupported"
				}
			}
		}, "although its feature CredentialRotation is claimed"},
		"statistics do not add up": {func(r map[string]any) {
			r["tests"].([]any)[0].(map[string]any)["result"] = "failed"
		}, "does not match the test results"},
		"no suite version": {func(r map[string]any) {
			delete(r["suite"].(map[string]any), "version")
		}, "suite.version is missing"},
		"no core version": {func(r map[string]any) {
			r["suite"].(map[string]any)["core"] = ""
		}, "suite.core is missing"},
		"unknown client-go version": {func(r map[string]any) {
			r["suite"].(map[string]any)["clientGo"] = "unknown (go list -m: exit status 1)"
		}, "suite.clientGo is missing"},
		"wrong kind": {func(r map[string]any) { r["kind"] = "Other" }, "apiVersion/kind"},
		"no provider module": {func(r map[string]any) {
			delete(r["implementation"].(map[string]any), "module")
		}, "implementation.module is missing"},
		"unknown key": {func(r map[string]any) { r["extra"] = 1 }, "not a report"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			r := validReport(t)
			c.change(r)
			err := conformance.Verify(encode(t, r))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Verify = %v, want an error containing %q", err, c.want)
			}
		})
	}
}
