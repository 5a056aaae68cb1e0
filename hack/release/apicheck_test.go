// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	apidiffOnce sync.Once
	apidiffBin  string
	apidiffErr  error
)

// apidiffPath returns the apidiff binary: MCR_APIDIFF (make passes bin/tools/apidiff), or one
// built from the pinned tool module into a temporary directory.
func apidiffPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("MCR_APIDIFF"); p != "" {
		return p
	}
	apidiffOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mcr-apidiff-")
		if err != nil {
			apidiffErr = err
			return
		}
		apidiffBin = filepath.Join(dir, "apidiff")
		_, apidiffErr = command(filepath.Join("..", "tools", "apidiff"), []string{"GOWORK=off", "GOFLAGS=-mod=readonly"},
			"go", "build", "-o", apidiffBin, "golang.org/x/exp/cmd/apidiff")
	})
	if apidiffErr != nil {
		t.Fatalf("building apidiff: %v", apidiffErr)
	}
	return apidiffBin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if apidiffBin != "" {
		os.RemoveAll(filepath.Dir(apidiffBin))
	}
	os.Exit(code)
}

// The fixture: a workspace with one released module, lib, and the file that carries the next
// version. lib's internal package is not API.
const (
	libV1 = `package lib

// Hello greets.
func Hello(name string) string { return "hello " + name }

// Options configure nothing.
type Options struct{ Name string }
`
	libAdded = libV1 + `
// Bye is new.
func Bye() string { return "bye" }
`
	libBroken = `package lib

// Hello greets, now with a count.
func Hello(name string, n int) string { return "hello " + name }

// Options configure nothing.
type Options struct{ Name string }
`
	internalV1 = "package detail\n\n// Step is internal.\nfunc Step() {}\n"
)

// apiFixture writes the fixture with lib at libV1, commits it and returns the repository.
func apiFixture(t *testing.T, devVersion string, tags ...string) string {
	t.Helper()
	repo := filepath.Join(t.TempDir(), "repo")
	writeFiles(t, repo, map[string]string{
		"go.work":                  "go 1.26.0\n\nuse ./lib\n",
		"lib/go.mod":               "module example.com/lib\n\ngo 1.26.0\n",
		"lib/lib.go":               libV1,
		"lib/internal/detail/d.go": internalV1,
		"conformance/versions.go":  "package conformance\n\nconst Version = \"" + devVersion + "\"\n",
	})
	gitInit(t, repo)
	for _, tag := range tags {
		gitT(t, repo, "tag", tag)
	}
	return repo
}

func TestVerifyAPI(t *testing.T) {
	apidiff := apidiffPath(t)
	tests := []struct {
		name    string
		dev     string   // conformance.Version of the fixture
		tags    []string // on the fixture's commit, where lib is libV1
		lib     string   // lib.go in the working tree
		version string   // -version; empty: from conformance.Version
		base    string   // -base
		wantErr bool
		want    []string // lines (or parts of lines) of the report
	}{
		{
			name: "no change in a patch release", tags: []string{"lib/v0.1.0"}, lib: libV1, version: "v0.1.1",
			want: []string{"against lib/v0.1.0 (next v0.1.1): 0 incompatible, 0 compatible changes: ok", "verify-api: ok"},
		},
		{
			name: "added API in a minor release", tags: []string{"lib/v0.1.0"}, lib: libAdded, version: "v0.2.0",
			want: []string{"1 compatible changes: ok", "  compatible:   Bye: added"},
		},
		{
			name: "added API in a patch release", tags: []string{"lib/v0.1.0"}, lib: libAdded, version: "v0.1.1", wantErr: true,
			want: []string{"FAIL: these changes need a minor release after v0.1.0; v0.1.1 is a patch release"},
		},
		{
			name: "incompatible change in a v0 patch release", tags: []string{"lib/v0.1.0"}, lib: libBroken, version: "v0.1.1", wantErr: true,
			want: []string{"1 incompatible, 0 compatible changes: FAIL", "  incompatible: Hello: changed from func(string) string to func(string, int) string"},
		},
		{
			name: "incompatible change in a v0 minor release", tags: []string{"lib/v0.1.0"}, lib: libBroken, version: "v0.2.0",
			want: []string{"1 incompatible, 0 compatible changes: ok"},
		},
		{
			name: "incompatible change after v1", tags: []string{"lib/v0.1.0", "lib/v1.0.0"}, lib: libBroken, version: "v1.1.0", wantErr: true,
			want: []string{"against lib/v1.0.0", "FAIL: these changes need a major release after v1.0.0"},
		},
		{
			name: "next version from conformance.Version", dev: "v0.1.1-dev", tags: []string{"lib/v0.1.0", "lib/v0.2.0-rc.1"}, lib: libBroken, wantErr: true,
			want: []string{"against lib/v0.1.0 (next v0.1.1)"},
		},
		{
			name: "change to the released version itself", tags: []string{"lib/v0.1.0"}, lib: libAdded, version: "v0.1.0", wantErr: true,
			want: []string{"v0.1.0 is the same version"},
		},
		{
			name: "no previous release", lib: libBroken, version: "v0.1.0",
			want: []string{"verify-api: example.com/lib: no previous release (no tag lib/v*) and no API_BASE: nothing to compare", "verify-api: ok"},
		},
		{
			name: "no previous release, against a ref", lib: libBroken, version: "v0.1.0", base: "main",
			want: []string{"against main (next v0.1.0): 1 incompatible, 0 compatible changes: ok: no release yet"},
		},
		{
			name: "unknown base", lib: libV1, version: "v0.1.0", base: "nosuchref", wantErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dev := tt.dev
			if dev == "" {
				dev = "v0.9.0-dev" // a next version no case expects
			}
			repo := apiFixture(t, dev, tt.tags...)
			writeFiles(t, repo, map[string]string{"lib/lib.go": tt.lib})
			var out bytes.Buffer
			args := []string{"verify-api", "-root", repo, "-apidiff", apidiff, "-version", tt.version, "-base", tt.base}
			err := run(args, &out, &out)
			report := out.String()
			if (err != nil) != tt.wantErr {
				t.Errorf("verify-api: error %v, want an error: %v\n%s", err, tt.wantErr, report)
			}
			for _, w := range tt.want {
				if !strings.Contains(report, w) {
					t.Errorf("report lacks %q:\n%s", w, report)
				}
			}
		})
	}
}

// TestVerifyAPIIgnoresInternal: a changed internal package is no API change.
func TestVerifyAPIIgnoresInternal(t *testing.T) {
	repo := apiFixture(t, "v0.1.1-dev", "lib/v0.1.0")
	writeFiles(t, repo, map[string]string{"lib/internal/detail/d.go": "package detail\n\n// Other replaces Step.\nfunc Other(int) {}\n"})
	var out bytes.Buffer
	if err := run([]string{"verify-api", "-root", repo, "-apidiff", apidiffPath(t)}, &out, &out); err != nil {
		t.Fatalf("verify-api: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "0 incompatible, 0 compatible changes: ok") {
		t.Errorf("report:\n%s", out.String())
	}
}

func TestParseAPIDiff(t *testing.T) {
	got, err := parseAPIDiff("Incompatible changes:\n- Z: removed\n- A: changed\nCompatible changes:\n- B: added\n- B: added\n")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got.Incompatible, ",") != "A: changed,Z: removed" || strings.Join(got.Compatible, ",") != "B: added" {
		t.Errorf("parsed %+v", got)
	}
	if _, err := parseAPIDiff("Incompatible changes:\n* A: removed\n"); err == nil {
		t.Error("a report in an unknown shape parsed without an error")
	}
	if c, err := parseAPIDiff(""); err != nil || len(c.Incompatible)+len(c.Compatible) != 0 {
		t.Errorf("an empty report: %+v, %v", c, err)
	}
}
