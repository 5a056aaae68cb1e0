// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Command gotest runs `go test -race -json ./...` in each given module directory, prints what
// a reader needs (failing tests with their output, one line per package) and ends with one
// summary line over all modules:
//
//	tests: 123 passed, 0 failed, 2 skipped
//
// It exits non-zero when any test, package or module failed. `make test` runs it with the
// modules listed in go.work; it uses only the standard library so that it builds in a second
// without a module of its own (GOWORK=off go build -o bin/tools/gotest hack/gotest/main.go).
//
// With -jobs N it tests up to N modules at a time (most of a module's time is spent waiting for
// API servers and timeouts, not computing) and prints each module's report when it ends.
//
// Usage: gotest [-timeout 30m] [-jobs 1] [-args '-run X -v'] [-pkgs ./...] module-dir...
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
)

// event is one line of `go test -json` (see `go doc test2json`).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string // build-output and build-fail events
}

type counts struct{ passed, failed, skipped int }

func (c *counts) add(o counts) {
	c.passed += o.passed
	c.failed += o.failed
	c.skipped += o.skipped
}

func (c counts) String() string {
	return fmt.Sprintf("%d passed, %d failed, %d skipped", c.passed, c.failed, c.skipped)
}

func main() {
	timeout := flag.String("timeout", "30m", "go test -timeout for each module")
	extra := flag.String("args", "", "extra go test arguments, space separated")
	pkgs := flag.String("pkgs", "./...", "package patterns to test in each module, space separated")
	jobs := flag.Int("jobs", 1, "modules tested at a time")
	flag.Parse()
	modules := flag.Args()
	if len(modules) == 0 {
		fmt.Fprintln(os.Stderr, "gotest: no module directories given")
		os.Exit(2)
	}
	args := []string{"test", "-race", "-json", "-timeout", *timeout}
	args = append(args, strings.Fields(*extra)...)
	verbose := slices.Contains(args, "-v") || slices.Contains(args, "-test.v")
	args = append(args, strings.Fields(*pkgs)...)

	type result struct {
		dir    string
		counts counts
		out    *bytes.Buffer
	}
	results := make([]chan result, len(modules))
	sem := make(chan struct{}, max(*jobs, 1))
	for i, dir := range modules {
		results[i] = make(chan result, 1)
		go func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			var out bytes.Buffer
			locked := &lockedWriter{w: &out}
			w, errW := io.Writer(locked), io.Writer(locked)
			if *jobs <= 1 {
				w, errW = os.Stdout, os.Stderr // one module at a time: report as it goes
			}
			start := time.Now()
			fmt.Fprintf(w, "=== module %s: go %s\n", dir, strings.Join(args, " "))
			c, err := runModule(dir, args, verbose, w, errW)
			if err != nil && c.failed == 0 {
				// go test failed without a failing test or package: count the module itself.
				fmt.Fprintf(w, "FAIL module %s: %v\n", dir, err)
				c.failed++
			}
			fmt.Fprintf(w, "=== module %s: %s (%s)\n", dir, c, time.Since(start).Round(time.Second))
			results[i] <- result{dir: dir, counts: c, out: &out}
		}()
	}
	var total counts
	var failedModules []string
	for _, ch := range results {
		r := <-ch
		_, _ = io.Copy(os.Stdout, r.out)
		if r.counts.failed > 0 {
			failedModules = append(failedModules, r.dir)
		}
		total.add(r.counts)
	}
	if len(failedModules) > 0 {
		fmt.Printf("FAILED modules: %s\n", strings.Join(failedModules, " "))
	}
	fmt.Printf("tests: %s\n", total)
	if total.failed > 0 {
		os.Exit(1)
	}
}

func runModule(dir string, args []string, verbose bool, w, errW io.Writer) (counts, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Stderr = errW
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return counts{}, err
	}
	if err := cmd.Start(); err != nil {
		return counts{}, err
	}
	c := report(stdout, w, verbose)
	return c, cmd.Wait()
}

// report reads test2json events and writes the human view to w.
func report(r io.Reader, w io.Writer, verbose bool) counts {
	var c counts
	testOutput := map[string][]string{}     // output of running tests, by package and test
	failedSubtests := map[string][]string{} // output of failed subtests, by top-level test
	failedTests := map[string]int{}         // failed tests per package
	packageOutput := map[string][]string{}  // package-level output, shown when the package fails
	scanner := bufio.NewScanner(r)
	scanner.Buffer(make([]byte, 1024*1024), 16*1024*1024)
	for scanner.Scan() {
		line := scanner.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(w, "%s\n", line)
			continue
		}
		if verbose && e.Output != "" {
			fmt.Fprint(w, e.Output)
		}
		switch {
		case e.Action == "build-output":
			if !verbose {
				fmt.Fprint(w, e.Output)
			}
		case e.Action == "build-fail":
			// The package's own "fail" event follows and counts it.
		case e.Test != "":
			key := e.Package + "\x00" + e.Test
			switch e.Action {
			case "output":
				testOutput[key] = append(testOutput[key], e.Output)
			case "pass":
				c.passed++
				delete(testOutput, key)
			case "skip":
				c.skipped++
				delete(testOutput, key)
			case "fail":
				c.failed++
				failedTests[e.Package]++
				// Subtests end before their parent: keep their output until the top-level
				// test ends, then print the parent's lines first, as go test does.
				top, _, isSubtest := strings.Cut(e.Test, "/")
				topKey := e.Package + "\x00" + top
				if isSubtest {
					failedSubtests[topKey] = append(failedSubtests[topKey], testOutput[key]...)
				} else if !verbose {
					fmt.Fprint(w, strings.Join(testOutput[key], ""))
					fmt.Fprint(w, strings.Join(failedSubtests[topKey], ""))
				}
				delete(testOutput, key)
				if !isSubtest {
					delete(failedSubtests, topKey)
				}
			}
		default: // package-level
			switch e.Action {
			case "output":
				if strings.HasPrefix(e.Output, "ok ") || strings.HasPrefix(e.Output, "?") {
					if !verbose && !strings.HasPrefix(e.Output, "?") {
						fmt.Fprint(w, e.Output)
					}
					continue
				}
				packageOutput[e.Package] = append(packageOutput[e.Package], e.Output)
			case "fail":
				if !verbose {
					fmt.Fprint(w, strings.Join(packageOutput[e.Package], ""))
				}
				if failedTests[e.Package] == 0 {
					// Build failure, panic outside a test, timeout: no test carries the blame.
					c.failed++
				}
			}
		}
	}
	if err := scanner.Err(); err != nil {
		fmt.Fprintf(w, "gotest: reading go test output: %v\n", err)
		c.failed++
	}
	return c
}

// lockedWriter serializes writes: a module's test output and go's stderr arrive from two
// goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
