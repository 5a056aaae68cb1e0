// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package migration

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// upstreamImport matches an import of multicluster-runtime in Go source.
var upstreamImport = regexp.MustCompile(`"sigs\.k8s\.io/multicluster-runtime[/"]`)

// separateModule matches an import of one of multicluster-runtime's providers that are modules
// of their own, which the Go module proxy does not serve: programs that use them cannot be
// compiled against multicluster-runtime here, only against mcr.
var separateModule = regexp.MustCompile(`"sigs\.k8s\.io/multicluster-runtime/providers/(file|kind|cluster-api|cluster-inventory-api)[/"]`)

// notCompiling matches an import of a multicluster-runtime v0.24.1 package that does not compile
// against controller-runtime v0.25, which this module requires: its namespace provider's cluster
// has v0.24's GetEventRecorder. Programs that use it are compiled against mcr only, until a
// multicluster-runtime that supports v0.25 is served.
var notCompiling = regexp.MustCompile(`"sigs\.k8s\.io/multicluster-runtime/providers/namespace"`)

// documentedSed returns the shell block of docs/migration.md that rewrites imports: the first
// ```sh block that runs sed.
func documentedSed(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/migration.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range strings.Split(string(doc), "```sh\n")[1:] {
		block, _, _ = strings.Cut(block, "```")
		if strings.Contains(block, "sed -i") {
			return block
		}
	}
	t.Fatal("docs/migration.md has no sh block that runs sed")
	return ""
}

// programs returns the names of the programs in testdata.
func programs(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		t.Fatal("no programs in testdata")
	}
	return names
}

// build compiles the Go files of dir as package <module>/<pkg>, a directory that does not exist
// in the module whose root is moduleDir (go build -overlay adds it), and returns go's output.
func build(t *testing.T, moduleDir, pkg, dir string) error {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	replace := map[string]string{}
	for _, f := range files {
		abs, err := filepath.Abs(f)
		if err != nil {
			t.Fatal(err)
		}
		replace[filepath.Join(moduleDir, pkg, filepath.Base(f))] = abs
	}
	overlay, err := json.Marshal(map[string]any{"Replace": replace})
	if err != nil {
		t.Fatal(err)
	}
	overlayFile := filepath.Join(t.TempDir(), "overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goBin, "build", "-overlay", overlayFile, "-o", os.DevNull, "./"+pkg)
	cmd.Dir = moduleDir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return errors.New(strings.TrimSpace(string(out)))
	}
	return nil
}

// The programs of testdata compile against multicluster-runtime v0.24.1 as they are, and
// against mcr after the documented sed, with no import of multicluster-runtime left.
func TestUpstreamProgramsCompileAfterTheDocumentedSed(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles programs")
	}
	examplesDir, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	sed := documentedSed(t)
	work := t.TempDir()
	names := programs(t)
	for _, name := range names {
		src, err := os.ReadFile(filepath.Join("testdata", name, "main.go"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(work, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(work, name, "main.go"), src, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", sed)
	cmd.Dir = work
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("running the documented sed: %v\n%s", err, out)
	}

	compiled := 0
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			// The examples module requires multicluster-runtime (through core), so the
			// program compiles there against it as it is.
			original, err := os.ReadFile(filepath.Join("testdata", name, "main.go"))
			if err != nil {
				t.Fatal(err)
			}
			if separateModule.Match(original) {
				t.Logf("%s uses a provider module of multicluster-runtime the module proxy does not serve: compiled against mcr only", name)
			} else if notCompiling.Match(original) {
				t.Logf("%s uses multicluster-runtime v0.24.1's namespace provider, which does not compile against controller-runtime v0.25: compiled against mcr only", name)
			} else if err := build(t, examplesDir, "migration/zz-upstream/"+name, filepath.Join("testdata", name)); err != nil {
				t.Fatalf("the program does not compile against multicluster-runtime itself:\n%v", err)
			}
			ported, err := os.ReadFile(filepath.Join(work, name, "main.go"))
			if err != nil {
				t.Fatal(err)
			}
			if left := upstreamImport.FindAllString(string(ported), -1); len(left) > 0 {
				t.Errorf("the sed left %d import(s) of multicluster-runtime", len(left))
			}
			if err := build(t, examplesDir, "migration/zz-mcr/"+name, filepath.Join(work, name)); err != nil {
				t.Fatalf("after the documented sed, the program does not compile against mcr:\n%v", err)
			}
			compiled++
		})
	}
	t.Logf("%d of %d programs written for multicluster-runtime v0.24.1 compile against mcr after the documented sed", compiled, len(names))
}
