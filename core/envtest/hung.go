// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package envtest

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// HungEndpoint is a TCP endpoint that accepts connections and never answers: what a member
// looks like when its apiserver, or a load balancer in front of it, hangs. Clients connect at
// once and then wait, in the TLS handshake, as long as their own timeouts allow. It reads and
// discards what clients send, only to notice when they give up, and closes those connections.
// All methods are safe for concurrent use.
type HungEndpoint struct {
	ln    net.Listener
	creds *memberCredentials

	accepted atomic.Int64
	mu       sync.Mutex
	conns    map[net.Conn]struct{}
	closed   bool
	done     chan struct{}
	wg       sync.WaitGroup
}

// sweepInterval is how often a HungEndpoint looks for connections their clients closed.
const sweepInterval = 500 * time.Millisecond

// StartHungEndpoint listens on a free port of 127.0.0.1. It runs two goroutines, whatever the
// number of connections: one accepts, one closes the connections their clients gave up on.
func StartHungEndpoint() (*HungEndpoint, error) {
	creds, err := newMemberCredentials("hung")
	if err != nil {
		return nil, fmt.Errorf("envtest: hung endpoint: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("envtest: hung endpoint: %w", err)
	}
	h := &HungEndpoint{ln: ln, creds: creds, conns: map[net.Conn]struct{}{}, done: make(chan struct{})}
	h.wg.Go(h.accept)
	h.wg.Go(h.sweep)
	return h, nil
}

// StartHungEndpointForTest starts a HungEndpoint and closes it when the test ends.
func StartHungEndpointForTest(t testing.TB) *HungEndpoint {
	t.Helper()
	h, err := StartHungEndpoint()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("closing hung endpoint: %v", err)
		}
	})
	return h
}

// Host returns the endpoint's URL, https://127.0.0.1:<port>.
func (h *HungEndpoint) Host() string {
	return "https://127.0.0.1:" + strconv.Itoa(h.ln.Addr().(*net.TCPAddr).Port)
}

// Config returns a new rest.Config for the endpoint, shaped like a member's (its own CA, a
// client certificate, QPS 100 and burst 200) and without a timeout, as configs built from
// kubeconfigs are. Callers may modify it.
func (h *HungEndpoint) Config() *rest.Config {
	return &rest.Config{
		Host: h.Host(),
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   append([]byte(nil), h.creds.caPEM...),
			CertData: append([]byte(nil), h.creds.adminCertPEM...),
			KeyData:  append([]byte(nil), h.creds.adminKeyPEM...),
		},
		QPS:   clientQPS,
		Burst: clientBurst,
	}
}

// Accepted returns how many connections the endpoint has accepted.
func (h *HungEndpoint) Accepted() int64 { return h.accepted.Load() }

// Open returns how many accepted connections are still open: their clients are still waiting.
func (h *HungEndpoint) Open() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.conns)
}

// Close stops listening and closes every connection; clients see them end.
func (h *HungEndpoint) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	close(h.done)
	var errs []error
	for c := range h.conns {
		errs = append(errs, c.Close())
	}
	h.conns = nil
	h.mu.Unlock()
	if err := h.ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		errs = append(errs, err)
	}
	h.wg.Wait()
	return errors.Join(errs...)
}

func (h *HungEndpoint) accept() {
	for {
		c, err := h.ln.Accept()
		if err != nil {
			return
		}
		h.accepted.Add(1)
		h.mu.Lock()
		if h.closed {
			h.mu.Unlock()
			_ = c.Close()
			return
		}
		h.conns[c] = struct{}{}
		h.mu.Unlock()
	}
}

// sweep closes, every sweepInterval, the connections whose client has closed its end.
func (h *HungEndpoint) sweep() {
	ticker := time.NewTicker(sweepInterval)
	defer ticker.Stop()
	buf := make([]byte, 4096)
	for {
		select {
		case <-h.done:
			return
		case <-ticker.C:
		}
		h.mu.Lock()
		for c := range h.conns {
			if clientGone(c, buf) {
				_ = c.Close()
				delete(h.conns, c)
			}
		}
		h.mu.Unlock()
	}
}

// clientGone drains what the client sent so far and reports whether it has closed its end.
func clientGone(c net.Conn, buf []byte) bool {
	if err := c.SetReadDeadline(time.Now().Add(time.Millisecond)); err != nil {
		return true
	}
	for {
		_, err := c.Read(buf)
		if err == nil {
			continue
		}
		var ne net.Error
		return !errors.As(err, &ne) || !ne.Timeout()
	}
}
