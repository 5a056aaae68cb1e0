// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Command release cuts a release of the mcr modules and checks that the exported API of each
// module changed no more than the version being released allows.
//
// Every module of go.work except examples is released, all at one version and from one commit,
// each with a tag carrying its directory: core/v0.1.0, conformance/v0.1.0,
// providers/kind/v0.1.0, ... `release release` checks that the tree is clean, tidy and that the
// version is new, then, in a clone of the repository:
//
//   - makes every workspace module require the others at the version with no replace directive
//     (examples too, so the tree states one version everywhere), sets conformance.Version to it,
//     turns the Unreleased section of CHANGELOG.md into the version's, runs `go mod tidy` in
//     every module in dependency order against a staging module proxy of the modules before it,
//     and commits ("Release v0.1.0"): the modules as users get them, so that `go get` and
//     `go install module@v0.1.0` work;
//   - writes the released modules at that commit as a Go module proxy and checks every go.sum
//     hash of a released module against it;
//   - runs `make verify`, `make test` and verify-api on that commit, resolving the release
//     through that proxy (-skip-checks skips them);
//   - tags every released module at it, then restores the development shape (the replace
//     directives and go.sum files of the released HEAD, which keep every module building with
//     GOWORK=off), moves conformance.Version to the next minor version with a -dev suffix and
//     opens a new Unreleased section in a second commit ("Begin v0.2.0-dev").
//
// Without -dry-run the two commits and the tags are then fetched into the repository (its
// branch fast-forwards) and the push command is printed; nothing is pushed. With -dry-run the
// commits are printed and the repository is left as it was. With -proxy, dry run or not, the
// module proxy is kept in the given directory (GOPROXY=file://dir).
//
// The go commands of a release use a module cache of their own for the released modules (see
// modCacheView): a version cached once is never fetched again, so a dry run must not leave its
// files in the user's cache.
//
// `release verify-api` compares the exported API of every released module in the working tree
// with the module's newest release tag (or the -base ref) using apidiff, prints the changes and
// fails when the next version is too small a step: from v1 an incompatible change needs a new
// major version, before v1 a new minor version; added API needs a new minor version.
//
// Usage:
//
//	release release -version v0.1.0 [-dry-run [-keep dir]] [-skip-checks] [-apidiff bin] [-proxy dir]
//	release verify-api -apidiff bin [-version v0.2.0] [-base ref]
//
// `make release` and `make verify-api` run it from the repository root.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(os.Stderr, "release: %v\n", err)
		}
		os.Exit(1)
	}
}

const usage = `usage:
  release release -version v0.1.0 [-dry-run [-keep dir]] [-skip-checks] [-apidiff bin] [-proxy dir]
  release verify-api -apidiff bin [-version v0.2.0] [-base ref]`

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return errors.New("no command")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("root", ".", "the repository")
	apidiff := fs.String("apidiff", "", "the golang.org/x/exp/cmd/apidiff binary (make builds it into bin/tools)")
	switch args[0] {
	case "release":
		o := releaseOptions{Out: stdout}
		fs.StringVar(&o.Version, "version", "", "the version to release, e.g. v0.1.0")
		fs.BoolVar(&o.DryRun, "dry-run", false, "release in a temporary clone and print the result; the repository is not changed")
		fs.StringVar(&o.Keep, "keep", "", "with -dry-run: clone into this new directory and keep it")
		fs.BoolVar(&o.SkipChecks, "skip-checks", false, "skip make verify, make test and verify-api on the release commit")
		fs.StringVar(&o.Proxy, "proxy", "", "also write the released modules as a Go module proxy (GOPROXY=file://dir) into this directory")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if o.Version == "" {
			return errors.New("-version is required (make release VERSION=v0.1.0)")
		}
		if o.Keep != "" && !o.DryRun {
			return errors.New("-keep needs -dry-run")
		}
		if !o.SkipChecks && *apidiff == "" {
			return errors.New("-apidiff is required unless -skip-checks")
		}
		o.Root, o.Apidiff = *root, *apidiff
		_, err := release(o)
		return err
	case "verify-api":
		o := apiOptions{Out: stdout}
		fs.StringVar(&o.Version, "version", "", "the version the tree is to be released as (default: conformance.Version without -dev)")
		fs.StringVar(&o.Base, "base", "", "a git ref to compare against instead of each module's newest release tag")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		o.Root, o.Apidiff = *root, *apidiff
		return verifyAPI(o)
	}
	fmt.Fprintln(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}
