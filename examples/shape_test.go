// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package examples_test

import (
	"bytes"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Every example program stands alone so that a user can copy its directory: the shared parts are
// copies, not imports. These tests keep the copies identical, so that reading one teaches all.

const (
	canonicalFlags      = "providers/kubeconfig/flags.go"
	canonicalController = "providers/kubeconfig/controller.go"
	// markerSetup is how a controller.go is recognized as a copy of the marker controller; the
	// examples with a controller of their own do not declare it.
	markerSetup = "func setupMarker("
)

// markerVariants are marker controllers that differ from the canonical one on purpose.
var markerVariants = map[string]string{
	"sharded/controller.go": "also annotates the replica that owns the cluster, and has no warmup: a standby replica owns no cluster",
}

func TestFlagsCopiesAreCanonical(t *testing.T) {
	want := readFile(t, canonicalFlags)
	copies := 0
	for _, path := range exampleGoFiles(t) {
		if filepath.Base(path) != "flags.go" || path == canonicalFlags {
			continue
		}
		copies++
		if err := sameLines(want, readFile(t, path)); err != nil {
			t.Errorf("%s differs from %s (copy it again): %v", path, canonicalFlags, err)
		}
	}
	if copies == 0 {
		t.Fatalf("found no copy of %s: the walk of the examples is broken", canonicalFlags)
	}
}

func TestMarkerCopiesAreCanonical(t *testing.T) {
	want := readFile(t, canonicalController)
	copies := 0
	for _, path := range exampleGoFiles(t) {
		if filepath.Base(path) != "controller.go" || path == canonicalController {
			continue
		}
		got := readFile(t, path)
		if !bytes.Contains(got, []byte(markerSetup)) {
			continue
		}
		if _, ok := markerVariants[path]; ok {
			continue
		}
		copies++
		if err := sameLines(want, got); err != nil {
			t.Errorf("%s differs from %s (copy it again, or list it in markerVariants with why): %v", path, canonicalController, err)
		}
	}
	if copies == 0 {
		t.Fatalf("found no copy of %s: the walk of the examples is broken", canonicalController)
	}
}

// TestProgramsImportNoInternalPackage: a copied example cannot import mcr.dev/examples/internal,
// so only tests and the internal packages themselves may.
func TestProgramsImportNoInternalPackage(t *testing.T) {
	fset := token.NewFileSet()
	for _, path := range exampleGoFiles(t) {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				t.Fatalf("%s: %v", fset.Position(imp.Pos()), err)
			}
			if strings.HasPrefix(p, "mcr.dev/examples/internal/") {
				t.Errorf("%s imports %s: an example program must stand alone, copy what it needs", fset.Position(imp.Pos()), p)
			}
		}
	}
}

// exampleGoFiles lists the .go files of the example programs, slash-separated and relative to
// the examples module: everything outside internal/ and testdata directories.
func exampleGoFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == "internal" || d.Name() == "testdata" || (path != "." && strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") {
			files = append(files, filepath.ToSlash(path))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.FromSlash(path))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sameLines returns nil when got equals want, or an error naming the first line that differs.
func sameLines(want, got []byte) error {
	w, g := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl || i >= len(w) || i >= len(g) {
			return fmt.Errorf("line %d is %q, want %q", i+1, gl, wl)
		}
	}
	return nil
}
