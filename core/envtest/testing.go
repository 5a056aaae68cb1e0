// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package envtest

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"
)

// StartForTest starts a fleet with the given members and stops it when the test ends. It
// fails the test at once, with the reason (for example the command that builds missing
// binaries), if the fleet does not start.
func StartForTest(t testing.TB, members ...string) *Fleet {
	t.Helper()
	return StartForTestWithOptions(t, Options{Members: members})
}

// StartForTestWithOptions is StartForTest with full Options.
func StartForTestWithOptions(t testing.TB, opts Options) *Fleet {
	t.Helper()
	f, err := Start(t.Context(), opts)
	if err != nil {
		t.Fatalf("starting envtest fleet: %v", err)
	}
	t.Cleanup(func() {
		if err := f.Stop(); err != nil {
			t.Errorf("stopping envtest fleet: %v", err)
		}
	})
	return f
}

// MainStartTimeout bounds how long Main waits for its fleet to start.
const MainStartTimeout = 5 * time.Minute

// Main is a package's TestMain when its tests share one fleet, which is the usual case: starting
// API servers is the slow part of a test binary. It starts a fleet with opts, calls setup (which
// keeps the fleet in a package variable, builds clients, ...; an error fails the binary), runs
// the tests, stops the fleet and exits with the tests' code.
//
// A process that only fuzzes gets no fleet and setup is not called: a fuzzing worker (go test
// -fuzz starts several) and the process that coordinates them, unless it also runs tests that
// -run selects. Fuzz targets must therefore not need the fleet.
func Main(m *testing.M, opts Options, setup func(*Fleet) error) {
	os.Exit(runMain(m, opts, setup))
}

func runMain(m *testing.M, opts Options, setup func(*Fleet) error) int {
	if !flag.Parsed() {
		flag.Parse()
	}
	if onlyFuzzing() {
		return m.Run()
	}
	ctx, cancel := context.WithTimeout(context.Background(), MainStartTimeout)
	f, err := Start(ctx, opts)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if err := f.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}()
	if setup != nil {
		if err := setup(f); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return m.Run()
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
