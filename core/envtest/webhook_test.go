// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package envtest_test

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"mcr.dev/core/envtest"
)

// A server on the endpoint, with the files it wrote, is trusted through CABundle under the
// names the fleet's API servers use for a local webhook server, and by nothing else.
func TestWebhookEndpointServesTrustedTLS(t *testing.T) {
	e := envtest.NewWebhookEndpointForTest(t)
	opts := e.ServerOptions()
	if opts.Host != "127.0.0.1" || opts.Port != e.Port || e.URL() != "https://127.0.0.1:"+strconv.Itoa(e.Port) {
		t.Fatalf("endpoint %+v, server options %+v", e, opts)
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(opts.CertDir, opts.CertName), filepath.Join(opts.CertDir, opts.KeyName))
	if err != nil {
		t.Fatal(err)
	}
	if ca, err := os.ReadFile(filepath.Join(e.CertDir, envtest.WebhookCAFile)); err != nil || string(ca) != string(e.CABundle) {
		t.Fatalf("ca.crt: %v", err)
	}
	ln, err := tls.Listen("tcp", net.JoinHostPort(e.Host, strconv.Itoa(e.Port)), &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatalf("the endpoint's port is not free: %v", err)
	}
	server := &http.Server{Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})}
	go func() { _ = server.Serve(ln) }()
	t.Cleanup(func() { _ = server.Close() })

	get := func(roots *x509.CertPool, serverName string) error {
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: serverName, MinVersion: tls.VersionTLS12}}}
		resp, err := c.Get(e.URL())
		if err == nil {
			resp.Body.Close()
		}
		c.CloseIdleConnections()
		return err
	}
	trusted := x509.NewCertPool()
	if !trusted.AppendCertsFromPEM(e.CABundle) {
		t.Fatal("CABundle holds no certificate")
	}
	for _, name := range []string{"", "localhost"} {
		if err := get(trusted, name); err != nil {
			t.Errorf("server name %q: %v", name, err)
		}
	}
	if err := get(trusted, "webhooks.example.com"); err == nil {
		t.Error("the certificate is valid for a name it was not issued for")
	}
	other := envtest.NewWebhookEndpointForTest(t)
	untrusted := x509.NewCertPool()
	untrusted.AppendCertsFromPEM(other.CABundle)
	if err := get(untrusted, ""); err == nil {
		t.Error("another endpoint's CA is trusted")
	}
}
