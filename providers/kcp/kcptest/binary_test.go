// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kcptest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The version Start runs is the one `make kcp` builds.
func TestVersionMatchesToolModule(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, ok := repositoryRoot(wd)
	if !ok {
		t.Skip("not inside the mcr repository")
	}
	path := filepath.Join(root, "hack", "tools", "kcp", "go.mod")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		// A require line: "\tgithub.com/kcp-dev/kcp v0.30.0 // indirect".
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "github.com/kcp-dev/kcp" {
			if f[1] != Version {
				t.Errorf("%s requires kcp %s, kcptest.Version is %s", path, f[1], Version)
			}
			return
		}
	}
	t.Errorf("%s does not require github.com/kcp-dev/kcp", path)
}

func TestBinaryFromEnv(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "kcp")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(BinaryEnv, exe)
	if got, err := Binary(); err != nil || got != exe {
		t.Errorf("Binary() = %q, %v; want %q", got, err, exe)
	}

	notExecutable := filepath.Join(dir, "plain")
	if err := os.WriteFile(notExecutable, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{notExecutable, dir, filepath.Join(dir, "missing")} {
		t.Setenv(BinaryEnv, p)
		if _, err := Binary(); !errors.Is(err, ErrBinaryNotFound) || !strings.Contains(err.Error(), p) {
			t.Errorf("Binary() with %s=%s: %v; want ErrBinaryNotFound naming the path", BinaryEnv, p, err)
		}
	}
}

// Without the binary, the error names the command that builds it.
func TestBinaryMissingNamesMakeKCP(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.work"), []byte("go 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(root, "providers", "kcp")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(sub)
	t.Setenv(BinaryEnv, "")
	_, err := Binary()
	if !errors.Is(err, ErrBinaryNotFound) {
		t.Fatalf("Binary() = %v, want ErrBinaryNotFound", err)
	}
	for _, want := range []string{`"make kcp"`, root, filepath.Join(root, "bin", "kcp", Version, "kcp"), BinaryEnv} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestStartRefusesManagedFlags(t *testing.T) {
	_, err := Start(t.Context(), Options{Binary: "/nonexistent/kcp", Args: []string{"--secure-port=1"}})
	if err == nil || !strings.Contains(err.Error(), "--secure-port") {
		t.Errorf("Start with --secure-port in Args: %v, want an error naming it", err)
	}
}

func TestStartExplainsAnEarlyExit(t *testing.T) {
	bin, err := Binary()
	if err != nil {
		t.Fatal(err)
	}
	_, err = Start(t.Context(), Options{Binary: bin, Args: []string{"--no-such-flag"}})
	if err == nil {
		t.Fatal("Start succeeded with a flag kcp does not know")
	}
	for _, want := range []string{"kcp exited early", "no-such-flag"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q:\n%v", want, err)
		}
	}
}
