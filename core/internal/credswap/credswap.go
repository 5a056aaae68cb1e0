// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package credswap

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"

	"golang.org/x/oauth2"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"

	"mcr.dev/core/clusters"
	"mcr.dev/core/internal/membertransport"
)

var (
	// ErrNotSwappable means the config authenticates in a way whose credentials cannot be replaced
	// in place (an exec or auth-provider plugin, or a Transport of the caller's).
	ErrNotSwappable = errors.New("credentials cannot be replaced in place")
	// ErrEndpointChanged means the new config differs in more than its credentials (server, CA, TLS
	// or proxy settings, impersonation); it needs a new client.
	ErrEndpointChanged = errors.New("the member's endpoint changed, not only its credentials")
)

// Holder holds the credentials of the configs Config returns; Swap replaces them.
type Holder struct {
	mu       sync.RWMutex
	creds    *credentials
	endpoint *rest.Config // the config without its credentials, to compare with the next one
	// identity is endpoint with the first client certificate (public, no key), for Endpoint.
	identity *rest.Config

	base connections
}

// connections is the transport underneath a Holder's configs: a member's own pool
// (membertransport), or client-go's pool for the endpoint, shared by every client of it whose
// requests carry their credentials in headers.
type connections interface {
	http.RoundTripper
	// Renew moves later requests to new connections (a new client certificate).
	Renew() error
	Close()
	CloseIdleConnections()
}

// credentials is one immutable set of credentials: Swap replaces the whole value.
type credentials struct {
	token              string
	tokenSource        oauth2.TokenSource // BearerTokenFile, read again when it changes
	username, password string
	cert               *tls.Certificate
}

// Config returns a copy of cfg whose Transport authenticates with the credentials held by the
// returned Holder, initially cfg's. The copy keeps cfg's user agent, impersonation,
// WrapTransport, rate limits and timeouts; its TLS settings, Dial and Proxy move into the
// Transport (rest.Config requires TLSClientConfig to be empty beside a Transport).
func Config(cfg *rest.Config) (*rest.Config, *Holder, error) {
	if err := checkSwappable(cfg); err != nil {
		return nil, nil, err
	}
	creds, err := load(cfg)
	if err != nil {
		return nil, nil, err
	}
	h := &Holder{creds: creds, endpoint: endpointOf(cfg)}
	h.identity = clusters.CopyConfig(h.endpoint)
	h.identity.CertData, h.identity.CertFile = cfg.CertData, cfg.CertFile
	if h.base, err = connectionsFor(cfg, creds, h.clientCert); err != nil {
		return nil, nil, err
	}

	out := clusters.CopyConfig(cfg)
	clearCredentials(out)
	out.TLSClientConfig = rest.TLSClientConfig{}
	out.Dial, out.Proxy = nil, nil
	out.Transport = &roundTripper{h: h}
	return out, h, nil
}

// Swap makes every request from now on authenticate with cfg's credentials. It fails, and
// changes nothing, when cfg is for another endpoint (ErrEndpointChanged), cannot be swapped
// in (ErrNotSwappable) or its credentials cannot be read (a missing certificate file).
func (h *Holder) Swap(cfg *rest.Config) error {
	if err := checkSwappable(cfg); err != nil {
		return err
	}
	if !clusters.EqualConfigs(h.endpoint, endpointOf(cfg)) {
		return ErrEndpointChanged
	}
	creds, err := load(cfg)
	if err != nil {
		return err
	}
	if _, shared := h.base.(sharedConnections); shared && creds.cert != nil {
		// Other members' requests use these connections: none may present this certificate.
		return fmt.Errorf("%w: a client certificate where there was none", ErrNotSwappable)
	}
	h.mu.Lock()
	old := h.creds
	h.creds = creds
	h.mu.Unlock()
	if !membertransport.SameCertificate(old.cert, creds.cert) {
		// TLS authenticated the open connections with the old certificate.
		return h.base.Renew()
	}
	return nil
}

// EndpointConfig returns the endpoint the config's requests reach (server, TLS and proxy
// settings) and the client certificate it first authenticated with, without any secret: what
// decides which REST mapper it may share (mcr.dev/core/restmapper looks for this method).
func (rt *roundTripper) EndpointConfig() *rest.Config { return clusters.CopyConfig(rt.h.identity) }

// Close closes the connections of the configs' transport.
func (h *Holder) Close() { h.base.Close() }

// connectionsFor returns the transport for a Holder whose first credentials are creds. Without a
// client certificate, Dial or Proxy of the config's own, it is client-go's cached transport for
// the endpoint's TLS settings, as it would be for the config itself: members of one apiserver
// that authenticate with tokens share its connections, however many they are.
func connectionsFor(cfg *rest.Config, creds *credentials, getCert func() (*tls.Certificate, error)) (connections, error) {
	if creds.cert == nil && cfg.Dial == nil && cfg.Proxy == nil {
		rt, err := transport.New(&transport.Config{
			TLS: transport.TLSConfig{
				Insecure:   cfg.Insecure,
				ServerName: cfg.ServerName,
				CAFile:     cfg.CAFile,
				CAData:     cfg.CAData,
				NextProtos: cfg.NextProtos,
			},
			DisableCompression: cfg.DisableCompression,
		})
		if err != nil {
			return nil, fmt.Errorf("member TLS settings: %w", err)
		}
		return sharedConnections{rt}, nil
	}
	return membertransport.New(cfg, getCert)
}

// sharedConnections is client-go's cached transport for an endpoint, which other clients use
// too: it is never closed, and its client certificate never changes (it has none). Holding it
// keeps it in client-go's cache, which forgets transports nobody holds.
type sharedConnections struct{ rt http.RoundTripper }

func (c sharedConnections) RoundTrip(req *http.Request) (*http.Response, error) {
	return c.rt.RoundTrip(req)
}
func (sharedConnections) Renew() error            { return nil }
func (sharedConnections) Close()                  {}
func (c sharedConnections) CloseIdleConnections() { utilnet.CloseIdleConnectionsFor(c.rt) }

// SameEndpoint reports whether a and b differ in their credentials at most, i.e. whether a
// Holder built from a can take b's credentials.
func SameEndpoint(a, b *rest.Config) bool {
	return clusters.EqualConfigs(endpointOf(a), endpointOf(b))
}

func checkSwappable(cfg *rest.Config) error {
	switch {
	case cfg.ExecProvider != nil:
		return fmt.Errorf("%w: an exec plugin provides them", ErrNotSwappable)
	case cfg.AuthProvider != nil:
		return fmt.Errorf("%w: an auth-provider plugin provides them", ErrNotSwappable)
	case cfg.Transport != nil:
		return fmt.Errorf("%w: the config has a Transport of its own", ErrNotSwappable)
	}
	return nil
}

// endpointOf is cfg without its credentials.
func endpointOf(cfg *rest.Config) *rest.Config {
	if cfg == nil {
		return nil
	}
	e := clusters.CopyConfig(cfg)
	clearCredentials(e)
	return e
}

func clearCredentials(cfg *rest.Config) {
	cfg.BearerToken, cfg.BearerTokenFile = "", ""
	cfg.Username, cfg.Password = "", ""
	cfg.CertData, cfg.CertFile = nil, ""
	cfg.KeyData, cfg.KeyFile = nil, ""
}

// load reads cfg's credentials, with client-go's precedence: a token (or token file) wins
// over basic auth; a client certificate goes along with either.
func load(cfg *rest.Config) (*credentials, error) {
	c := &credentials{token: cfg.BearerToken}
	if c.token == "" && cfg.BearerTokenFile != "" {
		c.tokenSource = transport.NewCachedFileTokenSource(cfg.BearerTokenFile)
	}
	if c.token == "" && c.tokenSource == nil {
		c.username, c.password = cfg.Username, cfg.Password
	}
	certPEM, keyPEM := cfg.CertData, cfg.KeyData
	var err error
	if len(certPEM) == 0 && cfg.CertFile != "" {
		if certPEM, err = os.ReadFile(cfg.CertFile); err != nil {
			return nil, fmt.Errorf("reading the client certificate: %w", err)
		}
	}
	if len(keyPEM) == 0 && cfg.KeyFile != "" {
		if keyPEM, err = os.ReadFile(cfg.KeyFile); err != nil {
			return nil, fmt.Errorf("reading the client key: %w", err)
		}
	}
	switch {
	case len(certPEM) > 0 && len(keyPEM) > 0:
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			// The error of X509KeyPair never quotes the key.
			return nil, fmt.Errorf("the client certificate: %w", err)
		}
		c.cert = &cert
	case len(certPEM) > 0 || len(keyPEM) > 0:
		return nil, errors.New("the client certificate needs both a certificate and a key")
	}
	return c, nil
}

func (h *Holder) current() *credentials {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.creds
}

// clientCert is the TLS handshake's GetClientCertificate (nil: none, for client-go).
func (h *Holder) clientCert() (*tls.Certificate, error) { return h.current().cert, nil }

// roundTripper authenticates each request with the Holder's current credentials.
type roundTripper struct{ h *Holder }

var _ utilnet.RoundTripperWrapper = &roundTripper{}

func (rt *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	// Credentials set on the request win, as with client-go.
	if req.Header.Get("Authorization") != "" {
		return rt.h.base.RoundTrip(req)
	}
	c := rt.h.current()
	switch {
	case c.token != "" || c.tokenSource != nil:
		token := c.token
		if c.tokenSource != nil {
			t, err := c.tokenSource.Token()
			if err != nil {
				if req.Body != nil {
					_ = req.Body.Close()
				}
				return nil, fmt.Errorf("reading the bearer token file: %w", err)
			}
			token = t.AccessToken
		}
		req = utilnet.CloneRequest(req)
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(token))
	case c.username != "" || c.password != "":
		req = utilnet.CloneRequest(req)
		req.SetBasicAuth(c.username, c.password)
	}
	return rt.h.base.RoundTrip(req)
}

// WrappedRoundTripper returns the transport underneath, for client-go's helpers.
func (rt *roundTripper) WrappedRoundTripper() http.RoundTripper {
	if shared, ok := rt.h.base.(sharedConnections); ok {
		return shared.rt
	}
	return rt.h.base.(*membertransport.Transport).HTTPTransport()
}

// CloseIdleConnections closes the idle connections of the transport underneath.
func (rt *roundTripper) CloseIdleConnections() { rt.h.base.CloseIdleConnections() }
