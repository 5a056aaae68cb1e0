// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package membertransport builds the HTTP transport of a member whose client certificate can
// change while the transport lives (exec plugins, credentials replaced in place): the
// certificate is read at each TLS handshake, and the connections it authenticated can be
// closed when it changes.
package membertransport

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
	"k8s.io/client-go/util/connrotation"
)

// New returns a transport with cfg's TLS settings (CA, server name, insecure, next
// protocols), Dial and Proxy, whose client certificate is what getCert returns at each
// handshake (nil: none), and the dialer whose CloseAll closes its connections. cfg's
// credentials are not used: the caller authenticates requests.
func New(cfg *rest.Config, getCert func() (*tls.Certificate, error)) (*http.Transport, *connrotation.Dialer, error) {
	tlsConfig, err := transport.TLSConfigFor(&transport.Config{TLS: transport.TLSConfig{
		Insecure:   cfg.Insecure,
		ServerName: cfg.ServerName,
		CAFile:     cfg.CAFile,
		CAData:     cfg.CAData,
		NextProtos: cfg.NextProtos,
		// A comparable holder, as client-go wants; the hook reads the current certificate.
		GetCertHolder: &transport.GetCertHolder{GetCert: getCert},
	}})
	if err != nil {
		return nil, nil, fmt.Errorf("member TLS settings: %w", err)
	}
	dial := cfg.Dial
	if dial == nil {
		dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	dialer := connrotation.NewDialer(dial)
	return utilnet.SetTransportDefaults(&http.Transport{
		Proxy:               cfg.Proxy,
		TLSHandshakeTimeout: 10 * time.Second,
		TLSClientConfig:     tlsConfig,
		MaxIdleConnsPerHost: 25,
		DialContext:         dialer.DialContext,
		DisableCompression:  cfg.DisableCompression,
	}), dialer, nil
}

// SameCertificate reports whether a and b hold the same certificate chain (both nil: true).
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
