// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// The committer times of the history the test builds, oldest first on main;
// the side branch's commit is older than main's second commit but merged after it.
var (
	first  = time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	side   = time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)
	second = time.Date(2026, 1, 3, 10, 0, 0, 0, time.UTC)
	merged = time.Date(2026, 1, 4, 10, 0, 0, 0, time.UTC)
)

func TestStampGivesEachFileItsLastCommitsTime(t *testing.T) {
	repo := t.TempDir()
	run := func(when time.Time, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		stamp := strconv.FormatInt(when.Unix(), 10) + " +0000"
		cmd.Env = append(os.Environ(),
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_AUTHOR_DATE="+stamp,
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_COMMITTER_DATE="+stamp,
			"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(repo, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	run(first, "init", "-q", "-b", "main")
	write("old.txt", "old")
	write("pkg/testdata/corpus", "1")
	write("edited.txt", "committed")
	run(first, "add", ".")
	run(first, "commit", "-q", "-m", "first")

	run(first, "checkout", "-q", "-b", "side")
	write("pkg/fromside.txt", "side")
	run(side, "add", ".")
	run(side, "commit", "-q", "-m", "side")

	run(second, "checkout", "-q", "main")
	write("pkg/testdata/corpus", "2")
	run(second, "commit", "-q", "-am", "second")
	run(merged, "merge", "-q", "--no-ff", "-m", "merge side", "side")

	write("edited.txt", "edited") // differs from HEAD: keeps the edit's time
	write("untracked.txt", "new")

	t.Chdir(filepath.Join(repo, "pkg")) // stamp works from anywhere in the repository
	files, dirs, err := stamp()
	if err != nil {
		t.Fatal(err)
	}
	if files != 3 || dirs != 3 {
		t.Errorf("stamped %d files and %d directories, want 3 and 3 (edited.txt and untracked.txt left alone)", files, dirs)
	}

	for name, want := range map[string]time.Time{
		"old.txt":             first,
		"pkg/testdata/corpus": second,
		// Merged after main's second commit although committed before it: the merge's time,
		// so that bringing it in changes what go test sees.
		"pkg/fromside.txt": merged,
		"pkg/testdata":     second,
		"pkg":              merged,
		".":                merged,
	} {
		if got := modTime(t, filepath.Join(repo, name)); !got.Equal(want) {
			t.Errorf("%s: modified %v, want %v", name, got.UTC(), want)
		}
	}
	for _, name := range []string{"edited.txt", "untracked.txt"} {
		if got := modTime(t, filepath.Join(repo, name)); time.Since(got) > time.Hour {
			t.Errorf("%s differs from HEAD but was stamped %v", name, got.UTC())
		}
	}
}

func TestStampOutsideARepositoryFails(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(t.TempDir()))
	if _, _, err := stamp(); err == nil {
		t.Fatal("stamp outside a git repository: no error")
	}
}

func modTime(t *testing.T, path string) time.Time {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.ModTime()
}
