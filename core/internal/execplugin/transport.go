// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package execplugin

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"

	"mcr.dev/core/internal/membertransport"
)

// Config returns a copy of cfg without ExecProvider whose credentials come from a Source that
// runs cfg's exec plugin, and that Source; the Source lives until ctx ends or it is closed.
// When cfg has no ExecProvider, or has other credentials (a token, basic auth, a client
// certificate), which client-go prefers to the plugin's, the copy simply drops ExecProvider
// and the Source is nil.
//
// The copy's Transport carries the member's TLS settings (its TLSClientConfig is empty, as
// rest.Config requires of a config with a Transport), its Dial and Proxy; WrapTransport, the
// user agent and impersonation stay and are applied around it as usual.
func Config(ctx context.Context, cfg *rest.Config, opts Options) (*rest.Config, *Source, error) {
	out := *cfg
	out.ExecProvider = nil
	if cfg.ExecProvider == nil || hasOtherCredentials(cfg) {
		return &out, nil, nil
	}
	s := &Source{opts: opts, command: filepath.Base(cfg.ExecProvider.Command)}
	switch {
	case cfg.AuthProvider != nil:
		return nil, nil, s.errorf(ErrFailed, "cannot be used together with an auth-provider plugin")
	case cfg.Transport != nil:
		return nil, nil, s.errorf(ErrFailed, "cannot be used with a custom Transport")
	}
	s, err := newSource(ctx, cfg, opts)
	if err != nil {
		return nil, nil, err
	}
	// Connections are tracked so that those made with a replaced certificate can be closed.
	base, err := membertransport.New(cfg, s.clientCert)
	if err != nil {
		s.Close()
		return nil, nil, err
	}
	s.transport = base
	out.Transport = &roundTripper{s: s, base: base}
	out.TLSClientConfig = rest.TLSClientConfig{}
	out.Dial, out.Proxy = nil, nil
	return &out, s, nil
}

// hasOtherCredentials reports whether cfg authenticates without its exec plugin: client-go then
// never runs the plugin.
func hasOtherCredentials(cfg *rest.Config) bool {
	return cfg.BearerToken != "" || cfg.BearerTokenFile != "" || cfg.Username != "" ||
		(len(cfg.CertData) > 0 || cfg.CertFile != "") && (len(cfg.KeyData) > 0 || cfg.KeyFile != "")
}

// clientCert is the TLS handshake's GetClientCertificate: the current credential's certificate
// (nil for a token), which the request's RoundTrip has usually obtained already.
func (s *Source) clientCert() (*tls.Certificate, error) {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.withDefaults().Timeout)
	defer cancel()
	c, err := s.Get(ctx)
	if err != nil {
		return nil, err
	}
	return c.Cert, nil
}

// roundTripper authenticates requests with the Source's credential.
type roundTripper struct {
	s    *Source
	base *membertransport.Transport
}

var _ utilnet.RoundTripperWrapper = &roundTripper{}

func (rt *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	// Credentials set on the request win, as with client-go.
	if req.Header.Get("Authorization") != "" {
		return rt.base.RoundTrip(req)
	}
	cred, err := rt.s.Get(req.Context())
	if err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, fmt.Errorf("getting credentials: %w", err)
	}
	if cred.Token != "" {
		req = utilnet.CloneRequest(req)
		req.Header.Set("Authorization", "Bearer "+cred.Token)
	}
	res, err := rt.base.RoundTrip(req)
	if err == nil && res.StatusCode == http.StatusUnauthorized {
		// Refused: the next request runs the plugin again (once per credential).
		rt.s.invalidate(cred)
	}
	return res, err
}

// WrappedRoundTripper returns the transport underneath, for client-go's helpers.
func (rt *roundTripper) WrappedRoundTripper() http.RoundTripper { return rt.base.HTTPTransport() }

// CloseIdleConnections closes the idle connections of the transport underneath.
func (rt *roundTripper) CloseIdleConnections() { rt.base.CloseIdleConnections() }

// IsSourceError reports whether err (a request's error) comes from the member's exec plugin.
func IsSourceError(err error) bool {
	var e *Error
	return errors.As(err, &e)
}
