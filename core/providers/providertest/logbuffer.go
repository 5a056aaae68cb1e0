// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package providertest

import (
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
)

// LogBuffer collects the lines of a logger, so that a test can check what a provider logged.
// The zero value is ready to use and safe for concurrent use.
type LogBuffer struct {
	mu    sync.Mutex
	lines []string
}

// Logger returns a logger that appends every line, up to verbosity 1, to b.
func (b *LogBuffer) Logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.lines = append(b.lines, prefix+" "+args)
	}, funcr.Options{Verbosity: 1})
}

// Find returns the first line that contains every part, or an error saying none does.
func (b *LogBuffer) Find(parts ...string) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, l := range b.lines {
		if containsAll(l, parts) {
			return l, nil
		}
	}
	return "", errors.New("no log line contains " + strings.Join(parts, " and "))
}

// Contains reports whether any line contains s.
func (b *LogBuffer) Contains(s string) bool {
	_, err := b.Find(s)
	return err == nil
}

// Lines returns a copy of every line so far.
func (b *LogBuffer) Lines() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.lines)
}

// String returns every line so far, one per line: for a test's failure message.
func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.lines, "\n")
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// All returns every line that contains every part.
func (b *LogBuffer) All(parts ...string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, l := range b.lines {
		if containsAll(l, parts) {
			out = append(out, l)
		}
	}
	return out
}
