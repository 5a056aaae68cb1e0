// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package envtest

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"runtime"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"mcr.dev/core/internal/testcheck"
)

// A hung endpoint accepts connections and never answers: a request through its Config waits
// until the client's own timeout. Connections the client gives up on are closed by the
// endpoint, Close ends the rest, and nothing of it keeps running.
func TestHungEndpoint(t *testing.T) {
	goroutinesBefore := runtime.NumGoroutine()
	h, err := StartHungEndpoint()
	if err != nil {
		t.Fatal(err)
	}
	waitOpen := func(want int) {
		t.Helper()
		deadline := time.Now().Add(10 * sweepInterval)
		for h.Open() != want {
			if time.Now().After(deadline) {
				t.Fatalf("%d connections open, want %d", h.Open(), want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	// A client that gives up has its connection closed.
	gaveUp, err := net.Dial("tcp", h.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	waitOpen(1)
	_ = gaveUp.Close()
	waitOpen(0)

	// A request waits until the client's own timeout.
	cfg := h.Config()
	cfg.Timeout = 300 * time.Millisecond
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	resp, err := hc.Get(h.Host() + "/readyz")
	if err == nil {
		_ = resp.Body.Close()
		t.Fatalf("GET /readyz answered %s", resp.Status)
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("GET /readyz: %v, want a timeout", err)
	}
	if waited := time.Since(start); waited < cfg.Timeout {
		t.Fatalf("GET /readyz failed after %s, before the client's timeout", waited)
	}
	if n := h.Accepted(); n != 2 {
		t.Fatalf("accepted %d connections, want 2", n)
	}

	// Connections still waiting end with Close.
	conn, err := net.Dial("tcp", h.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for h.Accepted() != 3 {
		time.Sleep(10 * time.Millisecond)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("reading a connection after Close: %v, want EOF", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, h.Host(), nil)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		_ = resp.Body.Close()
		t.Fatal("the endpoint still accepts connections after Close")
	}
	hc.CloseIdleConnections()
	testcheck.WaitForGoroutines(t, goroutinesBefore, 5*time.Second)
}
