// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestChangelog(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, changelogFile)
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func() string {
		t.Helper()
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	day := time.Date(2026, 11, 26, 23, 0, 0, 0, time.FixedZone("x", -3*3600)) // 2026-11-27 in UTC
	v1 := version{minor: 1}
	v2 := version{minor: 2}

	write("# Changelog\n\nIntro.\n\n## Unreleased\n\n- first\n")
	if err := releaseChangelog(root, v1, day); err != nil {
		t.Fatal(err)
	}
	if err := openUnreleased(root); err != nil {
		t.Fatal(err)
	}
	want := "# Changelog\n\nIntro.\n\n## Unreleased\n\n## v0.1.0 (2026-11-27)\n\n- first\n"
	if got := read(); got != want {
		t.Fatalf("after releasing v0.1.0:\n%s\nwant:\n%s", got, want)
	}

	// Releasing the version the changelog has already changes nothing; the open section stays.
	if err := releaseChangelog(root, v1, day); err != nil || read() != want {
		t.Errorf("releasing v0.1.0 again: %v\n%s", err, read())
	}
	if err := openUnreleased(root); err != nil || read() != want {
		t.Errorf("opening a second Unreleased section: %v\n%s", err, read())
	}

	write("# Changelog\n\n## v0.1.0 (2026-11-27)\n")
	if err := releaseChangelog(root, v2, day); err == nil || !strings.Contains(err.Error(), "no \"## Unreleased\" section") {
		t.Errorf("releasing without an Unreleased section: %v", err)
	}
	if err := releaseChangelog(t.TempDir(), v2, day); err == nil {
		t.Error("releasing without a changelog succeeded")
	}
}
