// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Command gitmtime gives every file git tracks the time of the last commit that changed it as
// its modification time, and every directory that holds tracked files the newest of theirs.
//
// go test reuses a package's cached result while its code and whatever its tests read are
// unchanged, but it knows a file the tests open (a fuzz corpus, testdata, a CRD, a directory
// listing) by its size and modification time, not its content. A fresh clone stamps every file
// with the time of the clone, so on CI, which tests a fresh clone each run, every package whose
// tests read a file of the repository ran again even when nothing it reads had changed. Stamped
// with commit times, a file keeps its time until a commit changes it.
//
// Files that differ from HEAD (modified, staged or untracked) keep their own time, so that go
// test never takes an edited file for the committed one. Commits are walked along the first
// parent, a merge counting as changing what it brought in, so that a merged change stamps its
// files with the merge's time even when the branch's commits are older.
//
// .ci/run runs it before `make test`. It needs git and the standard library only:
//
//	GOWORK=off go run hack/gitmtime/main.go
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

func main() {
	files, dirs, err := stamp()
	if err != nil {
		fmt.Fprintf(os.Stderr, "gitmtime: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("gitmtime: %d files and %d directories stamped with their last commit's time\n", files, dirs)
}

func stamp() (files, dirs int, err error) {
	root, err := git("rev-parse", "--show-toplevel")
	if err != nil {
		return 0, 0, err
	}
	if err := os.Chdir(strings.TrimSpace(string(root))); err != nil {
		return 0, 0, err
	}
	dirty, err := changedFromHEAD()
	if err != nil {
		return 0, 0, err
	}
	times, err := lastCommitTimes()
	if err != nil {
		return 0, 0, err
	}
	tracked, err := git("ls-files", "-z")
	if err != nil {
		return 0, 0, err
	}
	dirTimes := map[string]time.Time{}
	for _, name := range strings.Split(string(tracked), "\x00") {
		t, ok := times[name]
		if name == "" || !ok || dirty[name] {
			continue
		}
		info, err := os.Lstat(name)
		if err != nil || !info.Mode().IsRegular() {
			continue // deleted in the working tree, or a link: nothing of ours to stamp
		}
		if err := os.Chtimes(name, t, t); err != nil {
			return files, dirs, err
		}
		files++
		for dir := path.Dir(name); ; dir = path.Dir(dir) {
			if t.After(dirTimes[dir]) {
				dirTimes[dir] = t
			}
			if dir == "." {
				break
			}
		}
	}
	for dir, t := range dirTimes {
		if err := os.Chtimes(filepath.FromSlash(dir), t, t); err != nil {
			return files, dirs, err
		}
		dirs++
	}
	return files, dirs, nil
}

// lastCommitTimes maps each path changed by a first-parent commit to the time of the newest
// such commit.
func lastCommitTimes() (map[string]time.Time, error) {
	out, err := git("-c", "core.quotePath=false", "log", "--first-parent", "--diff-merges=first-parent",
		"--no-renames", "--name-only", "--format=@%ct")
	if err != nil {
		return nil, err
	}
	times := map[string]time.Time{}
	var current time.Time
	scanner := bufio.NewScanner(bytes.NewReader(out))
	for scanner.Scan() {
		line := scanner.Text()
		switch {
		case line == "":
		case strings.HasPrefix(line, "@"):
			secs, err := strconv.ParseInt(line[1:], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("reading git log: %q is not a commit time", line)
			}
			current = time.Unix(secs, 0)
		case strings.HasPrefix(line, `"`):
			// A name git still quotes (a control character or a quote in it) is left unstamped.
		default:
			if _, seen := times[line]; !seen { // git log lists the newest commit first
				times[line] = current
			}
		}
	}
	return times, scanner.Err()
}

// changedFromHEAD returns the paths whose working-tree content may differ from HEAD.
func changedFromHEAD() (map[string]bool, error) {
	out, err := git("status", "--porcelain=v1", "-z", "--untracked-files=all")
	if err != nil {
		return nil, err
	}
	dirty := map[string]bool{}
	entries := strings.Split(string(out), "\x00")
	for i := 0; i < len(entries); i++ {
		entry := entries[i]
		if len(entry) < 4 {
			continue
		}
		dirty[entry[3:]] = true
		if entry[0] == 'R' || entry[0] == 'C' {
			i++ // the source of a rename or copy follows
			if i < len(entries) {
				dirty[entries[i]] = true
			}
		}
	}
	return dirty, nil
}

func git(args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(stderr.Bytes()))
	}
	return out, nil
}
