// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package gardentest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// skipReason is why Main started no garden (empty: it did, or Main was not used).
var skipReason string

// Main is the TestMain of a package whose tests share one garden: it starts the garden with
// opts, calls setup with it, runs the tests and stops the garden.
//
// Without a gardener-apiserver binary (ErrNotBuilt) the tests still run, and Skip skips them
// with the reason, unless $MCR_REQUIRE_GARDENER is set: then the binary fails. A process that
// only fuzzes starts no garden.
func Main(m *testing.M, opts Options, setup func(*Garden) error) {
	os.Exit(runMain(m, opts, setup))
}

func runMain(m *testing.M, opts Options, setup func(*Garden) error) int {
	if !flag.Parsed() {
		flag.Parse()
	}
	if f := flag.Lookup("test.fuzzworker"); f != nil && f.Value.String() == "true" {
		return m.Run()
	}
	if _, err := Binary(); errors.Is(err, ErrNotBuilt) && os.Getenv(RequireEnv) == "" {
		skipReason = fmt.Sprintf("%v (set %s to fail instead of skipping)", err, RequireEnv)
		return m.Run()
	}
	start := time.Now()
	g, err := Start(context.Background(), opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer g.Stop()
	fmt.Fprintf(os.Stderr, "gardentest: gardener-apiserver %s and %d shoot servers ready in %s\n",
		Version, len(g.ShootServers()), time.Since(start).Round(100*time.Millisecond))
	if setup != nil {
		if err := setup(g); err != nil {
			fmt.Fprintln(os.Stderr, strings.TrimSpace(err.Error()))
			return 1
		}
	}
	return m.Run()
}

// Skip skips t when Main started no garden because gardener-apiserver is not built.
func Skip(t testing.TB) {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
}
