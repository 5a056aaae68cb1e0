// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Command verify checks conformance reports against the list of tests of the suite it was
// built with (mcr.dev/conformance.Verify): the versions of the suite, core, multicluster-runtime,
// controller-runtime and client-go present, every test listed exactly once with a known result,
// feature claims consistent with the results, statistics that add up.
//
// Usage:
//
//	go run mcr.dev/conformance/cmd/verify report.yaml [more.yaml ...]
//
// It prints one line per report and exits non-zero if any report has a problem.
package main

import (
	"fmt"
	"os"

	"mcr.dev/conformance"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: verify report.yaml [more.yaml ...]")
		os.Exit(2)
	}
	failed := false
	for _, path := range os.Args[1:] {
		data, err := os.ReadFile(path)
		if err == nil {
			err = conformance.Verify(data)
		}
		if err != nil {
			failed = true
			fmt.Printf("%s: %v\n", path, err)
			continue
		}
		fmt.Printf("%s: ok\n", path)
	}
	if failed {
		os.Exit(1)
	}
}
