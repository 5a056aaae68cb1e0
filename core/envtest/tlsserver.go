// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package envtest

import (
	"context"
	"encoding/pem"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
)

// TLSServer is an HTTPS endpoint on 127.0.0.1 with a certificate of its own, for the stand-ins
// a test puts where a real system cannot run here (a front proxy, a credential endpoint). It
// serves HTTP/2, as an apiserver does. Every request's context ends when the server closes, so
// Close ends open watches instead of waiting for them, and the TLS errors of clients that hang
// up are not logged.
type TLSServer struct {
	srv    *httptest.Server
	cancel context.CancelFunc
}

// StartTLSServer starts a TLSServer that serves h.
func StartTLSServer(h http.Handler) *TLSServer {
	base, cancel := context.WithCancel(context.Background())
	srv := httptest.NewUnstartedServer(h)
	srv.EnableHTTP2 = true
	srv.Config.BaseContext = func(net.Listener) context.Context { return base }
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	return &TLSServer{srv: srv, cancel: cancel}
}

// URL returns the server's base URL, https://127.0.0.1:<port>.
func (s *TLSServer) URL() string { return s.srv.URL }

// CAData returns the PEM certificate that clients must trust to reach the server.
func (s *TLSServer) CAData() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.srv.Certificate().Raw})
}

// Close ends every open request, closes the connections and stops the server.
func (s *TLSServer) Close() {
	s.cancel()
	s.srv.CloseClientConnections()
	s.srv.Close()
}
