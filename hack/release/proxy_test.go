// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestZipHashesMatchTheGoCommand hashes a module the go command downloaded, in the module
// cache's download directory (a proxy's layout), and compares with what go.sum records for it.
func TestZipHashesMatchTheGoCommand(t *testing.T) {
	root := gitT(t, ".", "rev-parse", "--show-toplevel")
	sums, err := os.ReadFile(filepath.Join(root, "core", "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	download := filepath.Join(goEnv(t, "GOMODCACHE"), "cache", "download")
	checked := 0
	for line := range strings.Lines(string(sums)) {
		f := strings.Fields(line)
		if len(f) != 3 || strings.HasSuffix(f[1], "/go.mod") || !slices.Contains([]string{"sigs.k8s.io/yaml", "github.com/go-logr/logr"}, f[0]) {
			continue
		}
		v, err := parseVersion(f[1])
		if err != nil {
			t.Fatal(err)
		}
		zipSum, modSum, err := zipHashes(download, f[0], v)
		if err != nil {
			t.Fatalf("%s: %v (is the module downloaded? go mod download in core)", f[0], err)
		}
		if zipSum != f[2] {
			t.Errorf("%s %s: zip hash %s, go.sum says %s", f[0], f[1], zipSum, f[2])
		}
		if want := " " + f[1] + "/go.mod " + modSum + "\n"; !strings.Contains(string(sums), f[0]+want) {
			t.Errorf("%s %s: go.mod hash %s is not in core/go.sum", f[0], f[1], modSum)
		}
		checked++
	}
	if checked != 2 {
		t.Fatalf("checked %d modules, want 2", checked)
	}
}

// TestCheckSums writes a proxy of a released module and refuses a go.sum whose hash of it does
// not match, or that records another version of it.
func TestCheckSums(t *testing.T) {
	repo := filepath.Join(t.TempDir(), "repo")
	writeFiles(t, repo, map[string]string{
		"LICENSE":    "license text\n",
		"lib/go.mod": "module example.com/lib\n\ngo 1.26.0\n",
		"lib/lib.go": "package lib\n",
		"app/go.mod": "module example.com/app\n\ngo 1.26.0\n\nrequire example.com/lib v0.1.0\n",
	})
	gitInit(t, repo)
	lib, app := module{Dir: "lib", Path: "example.com/lib"}, module{Dir: "app", Path: "example.com/app"}
	v := version{minor: 1}
	proxy := t.TempDir()
	if err := writeProxy(repo, "HEAD", []module{lib}, v, proxy); err != nil {
		t.Fatal(err)
	}
	files, err := moduleFiles(repo, "HEAD", "lib")
	if err != nil {
		t.Fatal(err)
	}
	if string(files["LICENSE"]) != "license text\n" {
		t.Errorf("the module zip of a subdirectory without a LICENSE has LICENSE %q, want the repository's", files["LICENSE"])
	}
	zipSum, modSum, err := zipHashes(proxy, lib.Path, v)
	if err != nil {
		t.Fatal(err)
	}
	mods := []module{lib, app}
	sum := func(content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(repo, "app", "go.sum"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sum("example.com/lib v0.1.0 " + zipSum + "\nexample.com/lib v0.1.0/go.mod " + modSum + "\n")
	if err := checkSums(repo, mods, []module{lib}, v, proxy); err != nil {
		t.Errorf("matching go.sum refused: %v", err)
	}
	for name, content := range map[string]string{
		"other zip hash": "example.com/lib v0.1.0 h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\nexample.com/lib v0.1.0/go.mod " + modSum + "\n",
		"other version":  "example.com/lib v0.0.9 " + zipSum + "\n",
		"nothing":        "",
	} {
		sum(content)
		if err := checkSums(repo, mods, []module{lib}, v, proxy); err == nil {
			t.Errorf("%s: go.sum accepted", name)
		}
	}
}

func TestDependencyOrder(t *testing.T) {
	repo := t.TempDir()
	writeFiles(t, repo, map[string]string{
		"ex/go.mod":    "module example.com/ex\n\ngo 1.26.0\n\nrequire (\n\texample.com/p v0.0.0\n\texample.com/core v0.0.0\n)\n",
		"p/go.mod":     "module example.com/p\n\ngo 1.26.0\n\nrequire (\n\texample.com/suite v0.0.0\n\texample.com/core v0.0.0\n)\n",
		"suite/go.mod": "module example.com/suite\n\ngo 1.26.0\n\nrequire example.com/core v0.0.0\n",
		"core/go.mod":  "module example.com/core\n\ngo 1.26.0\n",
	})
	mods := []module{{"ex", "example.com/ex"}, {"p", "example.com/p"}, {"suite", "example.com/suite"}, {"core", "example.com/core"}}
	order, err := dependencyOrder(repo, mods)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := modulePaths(order), "example.com/core, example.com/suite, example.com/p, example.com/ex"; got != want {
		t.Errorf("order %s, want %s", got, want)
	}
	writeFiles(t, repo, map[string]string{"core/go.mod": "module example.com/core\n\ngo 1.26.0\n\nrequire example.com/ex v0.0.0\n"})
	if _, err := dependencyOrder(repo, mods); err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("a cycle: %v, want an error", err)
	}
}
