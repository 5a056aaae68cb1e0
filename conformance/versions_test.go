// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package conformance_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"mcr.dev/conformance"
)

// TestVersionsWithReplace reproduces a provider module outside any workspace that replaces the
// mcr.dev modules by directories (mcr.dev does not resolve): `go test` there, with GOWORK=off,
// must write a report that carries every version and verifies. The run skips every test, so it
// needs no cluster; it needs the go command and a module cache holding the dependencies.
func TestVersionsWithReplace(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a test binary in a temporary module")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	conformanceDir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	coreDir := filepath.Join(filepath.Dir(conformanceDir), "core")
	dir := t.TempDir()
	var sums []byte
	for _, f := range []string{"go.sum", filepath.Join(coreDir, "go.sum")} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sums = append(sums, data...)
	}
	files := map[string]string{
		"go.mod": "module example.com/provider\n\ngo 1.26.3\n\nrequire mcr.dev/conformance v0.0.0\n\nreplace (\n" +
			"\tmcr.dev/conformance => " + conformanceDir + "\n\tmcr.dev/core => " + coreDir + "\n)\n",
		"go.sum": string(sums),
		"conformance_test.go": `package provider

import (
	"testing"

	"mcr.dev/conformance"
)

func TestConformance(t *testing.T) {
	var all []string
	for _, tc := range conformance.Tests() {
		all = append(all, tc.ID)
	}
	conformance.Run(t, &conformance.KubeconfigHarness{}, conformance.Options{Skip: all})
}
`,
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	report := filepath.Join(dir, "report.yaml")
	cmd := exec.CommandContext(t.Context(), gobin, "test", "-count=1", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY=off", "GOTOOLCHAIN=local",
		conformance.ReportEnv+"="+report)
	out, err := cmd.CombinedOutput()
	if err != nil {
		if strings.Contains(string(out), "GOPROXY=off") || strings.Contains(string(out), "module lookup disabled") {
			t.Skipf("the module cache lacks a dependency: %s", out)
		}
		t.Fatalf("go test in the replacing module: %v\n%s", err, out)
	}
	data, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	if err := conformance.Verify(data); err != nil {
		t.Errorf("the report does not verify: %v\n%s", err, data)
	}
	var rep conformance.Report
	if err := yaml.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", rep.Suite)
	if !strings.HasPrefix(rep.Suite.Version, "(devel)") {
		t.Errorf("suite.version %q, want (devel): the suite is a directory replacement", rep.Suite.Version)
	}
	if rep.Implementation.Module != "example.com/provider (devel)" {
		t.Errorf("implementation.module %q, want the provider's module, (devel)", rep.Implementation.Module)
	}
	if !strings.Contains(rep.Suite.Core, "=> ") || !strings.Contains(rep.Suite.Core, coreDir) {
		t.Errorf("suite.core %q, want the replacement by %s", rep.Suite.Core, coreDir)
	}
	if !strings.Contains(rep.Suite.Module, conformanceDir) {
		t.Errorf("suite.module %q, want the replacement by %s", rep.Suite.Module, conformanceDir)
	}
}
