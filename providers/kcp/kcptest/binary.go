// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kcptest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Version is the kcp version `make kcp` builds and Start runs. It must match
// github.com/kcp-dev/kcp in hack/tools/kcp/go.mod (a test of this package checks it).
const Version = "v0.30.0"

// BinaryEnv names the environment variable holding the path of a kcp binary; it takes
// precedence over the repository's bin directory.
const BinaryEnv = "MCR_KCP_BINARY"

// ErrBinaryNotFound is returned (wrapped) by Start when the kcp binary is missing. Its message
// says how to build it.
var ErrBinaryNotFound = errors.New("kcp binary not found")

// buildHint is how to get the binary, for error messages.
const buildHint = "about 6 minutes on 2 cores the first time, a second afterwards"

// Binary returns the path of the kcp binary Start runs by default: $MCR_KCP_BINARY if set,
// otherwise bin/kcp/<Version>/kcp under the repository root (the nearest directory above the
// working directory that holds go.work). It fails with ErrBinaryNotFound, naming the command
// that builds the binary, when there is no executable file there.
func Binary() (string, error) {
	if p := os.Getenv(BinaryEnv); p != "" {
		if err := checkExecutable(p); err != nil {
			return "", fmt.Errorf("%w: %s=%s: %w", ErrBinaryNotFound, BinaryEnv, p, err)
		}
		return p, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the repository root: %w", err)
	}
	root, ok := repositoryRoot(wd)
	if !ok {
		return "", fmt.Errorf("%w: no go.work above %s, so the repository's bin/kcp/%s/kcp cannot be found; "+
			"run the tests inside the mcr repository or set %s to a kcp %s binary",
			ErrBinaryNotFound, wd, Version, BinaryEnv, Version)
	}
	p := filepath.Join(root, "bin", "kcp", Version, "kcp")
	if err := checkExecutable(p); err != nil {
		return "", fmt.Errorf(`%w: missing %s (kcp %s): run "make kcp" in the repository root (%s) to build it (%s), or set %s to a kcp %s binary`,
			ErrBinaryNotFound, p, Version, root, buildHint, BinaryEnv, Version)
	}
	return p, nil
}

// repositoryRoot returns the nearest directory at or above dir that holds go.work.
func repositoryRoot(dir string) (string, bool) {
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// checkExecutable reports why path is not an executable file, if it is not.
func checkExecutable(path string) error {
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return err
	case st.IsDir():
		return errors.New("is a directory")
	case st.Mode().Perm()&0o111 == 0:
		return errors.New("is not executable")
	}
	return nil
}
