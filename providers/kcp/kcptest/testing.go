// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kcptest

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kcp-dev/logicalcluster/v3"
)

// LogEnv names an environment variable that, when set to a file path, makes StartForTest and
// Main append kcp's log lines to that file (they are dropped otherwise, but for the last lines
// quoted in errors).
const LogEnv = "MCR_KCP_LOG"

// StartForTest starts kcp with opts and stops it when the test ends. It fails the test at once,
// with the reason (for example the command that builds a missing binary), if kcp does not start.
// Prefer Main: one kcp per test package.
func StartForTest(t testing.TB, opts Options) *Server {
	t.Helper()
	closeLog, err := logToEnvFile(&opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeLog)
	s, err := Start(t.Context(), opts)
	if err != nil {
		t.Fatalf("starting kcp: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("stopping kcp: %v", err)
		}
	})
	return s
}

// WorkspaceKubeconfigFileForTest writes the admin kubeconfig pointed at the workspace path ws
// (WorkspaceKubeconfig: what `kubectl ws use <path>` leaves) into a file of the test's temporary
// directory and returns its path, for a program under test that takes -kubeconfig.
func (s *Server) WorkspaceKubeconfigFileForTest(t testing.TB, ws logicalcluster.Path) string {
	t.Helper()
	data, err := s.WorkspaceKubeconfig(ws)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), strings.ReplaceAll(ws.String(), ":", "_")+".kubeconfig")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Main is a test package's TestMain when its tests share one kcp, the usual case: kcp takes
// 30-50 seconds to start. It starts kcp with opts, calls setup (which keeps the server in a
// package variable, creates the workspaces every test shares, ...; an error fails the binary),
// runs the tests, stops kcp and exits with the tests' code. It prints how long kcp took to start.
//
// A process that only fuzzes (a fuzzing worker, or -fuzz with -run '^$') starts no kcp and
// setup is not called: fuzz targets must not need kcp.
func Main(m *testing.M, opts Options, setup func(*Server) error) {
	os.Exit(runMain(m, opts, setup))
}

func runMain(m *testing.M, opts Options, setup func(*Server) error) int {
	if !flag.Parsed() {
		flag.Parse()
	}
	if onlyFuzzing() {
		return m.Run()
	}
	closeLog, err := logToEnvFile(&opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer closeLog()
	start := time.Now()
	s, err := Start(context.Background(), opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "kcptest: kcp %s ready at %s in %s\n", Version, s.URL(), time.Since(start).Round(100*time.Millisecond))
	defer func() {
		if err := s.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}()
	if setup != nil {
		if err := setup(s); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return m.Run()
}

// logToEnvFile points opts.Output at the file $MCR_KCP_LOG names, unless opts.Output is set.
func logToEnvFile(opts *Options) (closeLog func(), err error) {
	path := os.Getenv(LogEnv)
	if path == "" || opts.Output != nil {
		return func() {}, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("kcptest: opening %s=%s: %w", LogEnv, path, err)
	}
	opts.Output = f
	return func() { _ = f.Close() }, nil
}

// onlyFuzzing reports whether the test binary was started as a fuzzing worker, or to fuzz with
// no tests selected (-run '^$', as make fuzz does).
func onlyFuzzing() bool {
	value := func(name string) string {
		if f := flag.Lookup(name); f != nil {
			return f.Value.String()
		}
		return ""
	}
	if value("test.fuzzworker") == "true" {
		return true
	}
	return value("test.fuzz") != "" && value("test.run") == "^$"
}
