// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package envtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// tailLines is how many lines of a process's output are kept for error messages.
const tailLines = 30

// Process is a server that a test runs as a child process: etcd and kube-apiserver here, and
// the launchers of other systems' servers (kcp, gardener-apiserver) use it too. Its output goes
// to a writer, each line prefixed with "[name] ", and its last lines are kept for errors. On
// Linux the kernel kills it when the test binary dies without stopping it (a panic, a timeout),
// so no stray server outlives a test run.
type Process struct {
	name string
	cmd  *exec.Cmd
	tail *logTail
	done chan struct{} // closed when the process has exited and its output is drained
	err  error         // exit status; read only after done is closed
}

// StartProcess starts path with args as the process name; out (nil: nowhere) receives its
// output.
func StartProcess(name, path string, args []string, out io.Writer) (*Process, error) {
	tail := &logTail{prefix: "[" + name + "] ", out: out}
	cmd := exec.Command(path, args...)
	cmd.Stdout = tail
	cmd.Stderr = tail
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &Process{name: name, cmd: cmd, tail: tail, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Pid returns the process's ID.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed once the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Stop sends SIGTERM, and SIGKILL if the process is still running after grace. It returns once
// the process is gone.
func (p *Process) Stop(grace time.Duration) error {
	if p.Exited() {
		return nil
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stopping %s: %w", p.name, err)
	}
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-p.done:
		return nil
	case <-timer.C:
	}
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("killing %s: %w", p.name, err)
	}
	<-p.done
	return nil
}

// ExitError describes an exit of the process, which must have exited, with its last output.
func (p *Process) ExitError() error {
	return fmt.Errorf("%s exited early (%v); last output:\n%s", p.what(), p.err, p.tail.String())
}

// what names the process and, where it differs, its binary: "east (kube-apiserver)".
func (p *Process) what() string {
	if bin := filepath.Base(p.cmd.Path); bin != p.name {
		return p.name + " (" + bin + ")"
	}
	return p.name
}

// Output returns the last lines of the process's output, indented, for error messages.
func (p *Process) Output() string { return p.tail.String() }

// WaitUntil calls ready every 100ms until it succeeds, the process exits or ctx ends; the
// error of the last two says why, with the last output and the last error of ready.
func (p *Process) WaitUntil(ctx context.Context, ready func() error) error {
	ticker := time.NewTicker(pollInterval)
	defer ticker.Stop()
	for {
		err := ready()
		if err == nil {
			return nil
		}
		select {
		case <-p.done:
			return p.ExitError()
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %w (last probe: %v); last output:\n%s", p.what(), ctx.Err(), err, p.tail.String())
		case <-ticker.C:
		}
	}
}

// ProbeOK sends GET url with client and returns nil when it answers 200 OK, or an error with
// the status and the start of the body (a health check says there which check fails).
func ProbeOK(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, bytes.TrimSpace(body))
	}
	return nil
}

// pollInterval is how often readiness is probed while a process starts.
const pollInterval = 100 * time.Millisecond

// logTail is an io.Writer that forwards whole lines, prefixed, to out and keeps the last
// tailLines lines.
type logTail struct {
	prefix string
	out    io.Writer

	mu      sync.Mutex
	partial []byte
	lines   []string
}

func (l *logTail) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, b...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		line := string(l.partial[:i])
		l.partial = l.partial[i+1:]
		l.lines = append(l.lines, line)
		if len(l.lines) > tailLines {
			l.lines = l.lines[len(l.lines)-tailLines:]
		}
		if l.out != nil {
			// Log output is best effort: a failing writer must not stop the process.
			_, _ = io.WriteString(l.out, l.prefix+line+"\n")
		}
	}
	return len(b), nil
}

// String returns the kept lines, indented.
func (l *logTail) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	lines := append([]string(nil), l.lines...)
	if len(l.partial) > 0 {
		lines = append(lines, string(l.partial))
	}
	if len(lines) == 0 {
		return "    (no output)"
	}
	return "    " + strings.Join(lines, "\n    ")
}

func (l *logTail) contains(s string) bool {
	return strings.Contains(l.String(), s)
}

// syncWriter serializes writes from several processes to one user-supplied writer.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(b)
}

// FreePort asks the kernel for an unused port of 127.0.0.1. Another process may take it before
// the caller's binds it: retry when a process reports the address in use.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	return port, nil
}

// portInUse reports whether a process failed because its port was taken.
func portInUse(p *Process) bool {
	return p.tail.contains("address already in use")
}
