// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Command gendocs writes the list of conformance tests (conformance.TestsMarkdown) to the file
// named by its argument; `go generate` in conformance/ runs it for docs/conformance-tests.md.
package main

import (
	"fmt"
	"os"

	"mcr.dev/conformance"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gendocs <output.md>")
		os.Exit(2)
	}
	if err := os.WriteFile(os.Args[1], []byte(conformance.TestsMarkdown()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}
