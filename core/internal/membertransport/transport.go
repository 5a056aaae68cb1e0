// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package membertransport builds the HTTP transport of a member whose client certificate can
// change while the transport lives (exec plugins, credentials replaced in place): the
// certificate is read at each TLS handshake, and Renew moves later requests to connections
// the new certificate authenticates.
package membertransport

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
	"k8s.io/client-go/util/connrotation"
)

// Transport sends a member's requests over connections whose client certificate is what
// getCert returned at their handshake.
type Transport struct {
	cfg     *rest.Config
	getCert func() (*tls.Certificate, error)

	mu  sync.RWMutex
	cur *pool
}

// pool is one http.Transport and the dialer that tracks its connections.
type pool struct {
	transport *http.Transport
	dialer    *connrotation.Dialer
}

// New returns a transport with cfg's TLS settings (CA, server name, insecure, next
// protocols), Dial and Proxy, whose client certificate is what getCert returns at each
// handshake (nil: none). cfg's credentials are not used: the caller authenticates requests.
func New(cfg *rest.Config, getCert func() (*tls.Certificate, error)) (*Transport, error) {
	t := &Transport{cfg: cfg, getCert: getCert}
	p, err := t.newPool()
	if err != nil {
		return nil, err
	}
	t.cur = p
	return t, nil
}

func (t *Transport) newPool() (*pool, error) {
	tlsConfig, err := transport.TLSConfigFor(&transport.Config{TLS: transport.TLSConfig{
		Insecure:   t.cfg.Insecure,
		ServerName: t.cfg.ServerName,
		CAFile:     t.cfg.CAFile,
		CAData:     t.cfg.CAData,
		NextProtos: t.cfg.NextProtos,
		// A comparable holder, as client-go wants; the hook reads the current certificate.
		GetCertHolder: &transport.GetCertHolder{GetCert: t.getCert},
	}})
	if err != nil {
		return nil, fmt.Errorf("member TLS settings: %w", err)
	}
	dial := t.cfg.Dial
	if dial == nil {
		dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	dialer := connrotation.NewDialer(dial)
	return &pool{
		transport: utilnet.SetTransportDefaults(&http.Transport{
			Proxy:               t.cfg.Proxy,
			TLSHandshakeTimeout: 10 * time.Second,
			TLSClientConfig:     tlsConfig,
			MaxIdleConnsPerHost: 25,
			DialContext:         dialer.DialContext,
			DisableCompression:  t.cfg.DisableCompression,
		}),
		dialer: dialer,
	}, nil
}

func (t *Transport) current() *pool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.cur
}

// RoundTrip sends req over the current connections.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	return t.current().transport.RoundTrip(req)
}

// Renew is for a changed client certificate: requests from now on go over new connections, and
// those the old certificate authenticated are closed (requests and watches still on them end).
// A fresh pool rather than closing the old pool's connections in place, because an HTTP/2
// connection just closed stays in its pool until its reader notices, and a request sent on it
// meanwhile fails with "use of closed network connection".
// When a new pool cannot be built (its CA file became unreadable), the old connections are
// closed all the same and the error returned.
func (t *Transport) Renew() error {
	p, err := t.newPool()
	if err != nil {
		t.Close()
		return err
	}
	t.mu.Lock()
	old := t.cur
	t.cur = p
	t.mu.Unlock()
	old.close()
	return nil
}

// Close closes every connection; requests sent later open new ones.
func (t *Transport) Close() { t.current().close() }

// CloseIdleConnections closes the connections no request is using.
func (t *Transport) CloseIdleConnections() { t.current().transport.CloseIdleConnections() }

// HTTPTransport returns the current http.Transport, for client-go's helpers that look through
// wrappers (utilnet.RoundTripperWrapper).
func (t *Transport) HTTPTransport() *http.Transport { return t.current().transport }

func (p *pool) close() {
	p.dialer.CloseAll()
	p.transport.CloseIdleConnections()
}

// SameCertificate reports whether a and b are the same certificate chain (both nil included).
func SameCertificate(a, b *tls.Certificate) bool {
	if a == nil || b == nil || len(a.Certificate) != len(b.Certificate) {
		return a == b
	}
	for i := range a.Certificate {
		if string(a.Certificate[i]) != string(b.Certificate[i]) {
			return false
		}
	}
	return true
}
