// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package envtest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
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

// process is one running etcd or kube-apiserver.
type process struct {
	name string
	cmd  *exec.Cmd
	tail *logTail
	done chan struct{} // closed when the process has exited and its output is drained
	err  error         // exit status; read only after done is closed
}

// startProcess starts path with args. Output goes to out (prefixed with "[name] ") and the last
// lines are kept for error messages.
func startProcess(name, path string, args []string, out io.Writer) (*process, error) {
	tail := &logTail{prefix: "[" + name + "] ", out: out}
	cmd := exec.Command(path, args...)
	cmd.Stdout = tail
	cmd.Stderr = tail
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, tail: tail, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

func (p *process) pid() int { return p.cmd.Process.Pid }

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM, and SIGKILL if the process is still running after grace. It returns once
// the process is gone.
func (p *process) stop(grace time.Duration) error {
	if p.exited() {
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

// exitError describes an unexpected exit, with the last output lines.
func (p *process) exitError() error {
	return fmt.Errorf("%s exited early (%v); last output:\n%s", filepath.Base(p.cmd.Path), p.err, p.tail.String())
}

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

// freePort asks the kernel for an unused loopback port. Another process may take it before
// ours binds it; callers retry when a process reports the address in use.
func freePort() (int, error) {
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
func portInUse(p *process) bool {
	return p.tail.contains("address already in use")
}
