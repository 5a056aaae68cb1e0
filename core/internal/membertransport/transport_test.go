// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package membertransport_test

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"mcr.dev/core/internal/membertransport"
)

// TestRenewMovesRequestsToNewConnections: after Renew, requests go over a new connection at
// once (none is sent on the connection being closed) and the old connection is closed.
func TestRenewMovesRequestsToNewConnections(t *testing.T) {
	var (
		mu     sync.Mutex
		opened []net.Conn
		closed = map[net.Conn]bool{}
	)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.Proto)
	}))
	srv.EnableHTTP2 = true
	srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		switch s {
		case http.StateNew:
			opened = append(opened, c)
		case http.StateClosed:
			closed[c] = true
		}
	}
	srv.StartTLS()
	defer srv.Close()

	cfg := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true, NextProtos: []string{"h2"}}}
	// Connections whose reader learns of a close late, as on a busy machine: a request sent on
	// a closed connection still in its pool fails.
	cfg.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &slowCloseConn{Conn: c}, nil
	}
	tr, err := membertransport.New(cfg, func() (*tls.Certificate, error) { return nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	get := func() string {
		t.Helper()
		// A body that cannot be sent again: the transport may not retry the request on
		// another connection, as it may a GET.
		req, err := http.NewRequest(http.MethodPost, srv.URL, io.NopCloser(strings.NewReader("{}")))
		if err != nil {
			t.Fatal(err)
		}
		res, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatalf("request: %v", err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return string(b)
	}
	if proto := get(); proto != "HTTP/2.0" {
		t.Fatalf("the test needs HTTP/2, where a closed connection lingers in the pool; got %s", proto)
	}
	get()
	mu.Lock()
	if len(opened) != 1 {
		t.Fatalf("two requests opened %d connections, want 1 (reused)", len(opened))
	}
	first := opened[0]
	mu.Unlock()

	// Many renewals back to back, each followed at once by a request: none may fail.
	for range 20 {
		if err := tr.Renew(); err != nil {
			t.Fatal(err)
		}
		get()
	}
	mu.Lock()
	defer mu.Unlock()
	if len(opened) != 21 {
		t.Errorf("20 renewals opened %d connections in all, want 21 (one per renewal)", len(opened))
	}
	if !closed[first] {
		// The server sees the close once the client's FIN arrives; a request after it was
		// served, so it had arrived unless the connection was never closed.
		t.Errorf("the connection opened before Renew was not closed")
	}
}

// slowCloseConn fails writes as soon as it is closed, but its reader sees the close only a
// moment later.
type slowCloseConn struct {
	net.Conn
	closed atomic.Bool
}

func (c *slowCloseConn) Write(b []byte) (int, error) {
	if c.closed.Load() {
		return 0, net.ErrClosed
	}
	return c.Conn.Write(b)
}

func (c *slowCloseConn) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	time.AfterFunc(200*time.Millisecond, func() { _ = c.Conn.Close() })
	return nil
}
