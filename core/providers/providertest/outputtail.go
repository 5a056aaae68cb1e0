// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package providertest

import (
	"bytes"
	"io"
	"strings"
	"sync"
)

// defaultTailLines is how many lines an OutputTail keeps when Lines is not set.
const defaultTailLines = 40

// OutputTail is the stdout and stderr of a server process a provider's tests start (an
// apiserver, etcd, kcp): it passes whole lines, prefixed with Prefix, to Out when Out is set, and
// keeps the last Lines of them, which String returns for the error of a process that exited
// early.
type OutputTail struct {
	// Prefix starts every line passed to Out, e.g. "[etcd] ".
	Prefix string

	// Out receives the lines, e.g. os.Stderr in a verbose run. A failing Out is ignored: the
	// process must not stop on it.
	//
	// Defaults to nil: the lines are only kept.
	Out io.Writer

	// Lines is how many lines are kept.
	//
	// Defaults to 40.
	Lines int

	mu      sync.Mutex
	partial []byte
	lines   []string
}

// Write takes output of the process; a line is passed on and kept once it is complete.
func (t *OutputTail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	keep := t.Lines
	if keep <= 0 {
		keep = defaultTailLines
	}
	t.partial = append(t.partial, b...)
	for {
		i := bytes.IndexByte(t.partial, '\n')
		if i < 0 {
			break
		}
		line := string(t.partial[:i])
		t.partial = t.partial[i+1:]
		if t.Out != nil {
			_, _ = io.WriteString(t.Out, t.Prefix+line+"\n")
		}
		t.lines = append(t.lines, line)
		if len(t.lines) > keep {
			t.lines = t.lines[len(t.lines)-keep:]
		}
	}
	return len(b), nil
}

// String returns the kept lines, one a line.
func (t *OutputTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, "\n")
}
