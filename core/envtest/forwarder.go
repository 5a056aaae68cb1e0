// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package envtest

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
)

// Forwarder is a TCP endpoint in front of a member's apiserver that the test can take down and
// bring up again without touching the member: while down nothing listens (connections are
// refused) and every forwarded connection is closed. TLS passes through unchanged; the
// members' certificates are for 127.0.0.1, where the Forwarder listens too, so a kubeconfig
// that points at the Forwarder's URL with the member's CA works. Use it to make one member, or
// one identity's view of it, unreachable while the apiserver keeps serving everyone else. All
// methods are safe for concurrent use.
type Forwarder struct {
	addr   string
	target string

	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// StartForwarder listens on a free port of 127.0.0.1 and forwards to target (host:port), up.
func StartForwarder(target string) (*Forwarder, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("envtest: forwarder: %w", err)
	}
	f := &Forwarder{addr: ln.Addr().String(), target: target, conns: map[net.Conn]struct{}{}}
	f.serve(ln)
	return f, nil
}

// StartForwarderForTest is StartForwarder for m, closed when the test ends.
func StartForwarderForTest(t testing.TB, m *Member) *Forwarder {
	t.Helper()
	f, err := StartForwarder(m.Host()[len("https://"):])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f
}

// URL is the https URL of the Forwarder, to use in place of the member's Host.
func (f *Forwarder) URL() string { return "https://" + f.addr }

func (f *Forwarder) serve(ln net.Listener) {
	f.ln = ln
	f.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			f.wg.Go(func() { f.forward(c) })
		}
	})
}

func (f *Forwarder) forward(c net.Conn) {
	up, err := net.Dial("tcp", f.target)
	if err != nil {
		_ = c.Close()
		return
	}
	if !f.track(c, up) {
		_, _ = c.Close(), up.Close()
		return
	}
	f.wg.Go(func() { _, _ = io.Copy(up, c); _ = up.Close() })
	_, _ = io.Copy(c, up)
	_ = c.Close()
	f.untrack(c, up)
}

func (f *Forwarder) track(conns ...net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ln == nil {
		return false
	}
	for _, c := range conns {
		f.conns[c] = struct{}{}
	}
	return true
}

func (f *Forwarder) untrack(conns ...net.Conn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range conns {
		delete(f.conns, c)
	}
}

// Down stops listening and closes every forwarded connection. Down on a Forwarder that is down
// does nothing.
func (f *Forwarder) Down() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ln != nil {
		_ = f.ln.Close()
		f.ln = nil
	}
	for c := range f.conns {
		_ = c.Close()
	}
	clear(f.conns)
}

// Up listens again on the same address. Up on a Forwarder that is up does nothing.
func (f *Forwarder) Up() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return errors.New("envtest: forwarder is closed")
	}
	if f.ln != nil {
		return nil
	}
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return fmt.Errorf("envtest: forwarder: listening again on %s: %w", f.addr, err)
	}
	f.serve(ln)
	return nil
}

// Close takes the Forwarder down for good and waits for its goroutines.
func (f *Forwarder) Close() {
	f.Down()
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	f.wg.Wait()
}
