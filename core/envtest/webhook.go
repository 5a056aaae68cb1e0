// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package envtest

import (
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"
)

// WebhookEndpoint is where an admission webhook server under test listens so that the fleet's
// API servers can call it: a free port on 127.0.0.1 (the members run on this machine), a
// serving certificate for that address, and the CA that signed it, to register as the caBundle
// of the webhook configurations.
//
// The port is free when the endpoint is made; another process may take it before the server
// binds it, as with any port chosen in advance.
type WebhookEndpoint struct {
	// Host is the address to listen on: 127.0.0.1.
	Host string
	// Port is the port to listen on.
	Port int
	// CertDir holds the serving certificate and key as tls.crt and tls.key, the file names
	// controller-runtime's webhook server reads by default, and the CA as ca.crt.
	CertDir string
	// CABundle is the PEM certificate of the CA that signed the serving certificate.
	CABundle []byte
}

// Webhook serving certificate files in WebhookEndpoint.CertDir.
const (
	WebhookCertFile = "tls.crt"
	WebhookKeyFile  = "tls.key"
	WebhookCAFile   = "ca.crt"
)

// NewWebhookEndpoint picks a free port, mints a CA and a serving certificate for 127.0.0.1,
// ::1 and localhost, and writes them into dir (created if missing). Each endpoint has its own
// CA, so a member that was given another endpoint's caBundle fails to call it.
func NewWebhookEndpoint(dir string) (*WebhookEndpoint, error) {
	port, err := FreePort()
	if err != nil {
		return nil, fmt.Errorf("envtest: webhook endpoint: %w", err)
	}
	caPEM, certPEM, keyPEM, err := newWebhookServingCert()
	if err != nil {
		return nil, fmt.Errorf("envtest: webhook endpoint: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("envtest: webhook endpoint: %w", err)
	}
	for name, data := range map[string][]byte{WebhookCertFile: certPEM, WebhookKeyFile: keyPEM, WebhookCAFile: caPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return nil, fmt.Errorf("envtest: webhook endpoint: writing %s: %w", name, err)
		}
	}
	return &WebhookEndpoint{Host: "127.0.0.1", Port: port, CertDir: dir, CABundle: caPEM}, nil
}

// NewWebhookEndpointForTest is NewWebhookEndpoint in a temporary directory of the test; it
// fails the test on error.
func NewWebhookEndpointForTest(t testing.TB) *WebhookEndpoint {
	t.Helper()
	e, err := NewWebhookEndpoint(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// URL is the base URL members call: https://127.0.0.1:<port>, without a path.
func (e *WebhookEndpoint) URL() string {
	return "https://" + net.JoinHostPort(e.Host, strconv.Itoa(e.Port))
}

// ServerOptions are the options of a controller-runtime webhook server that serves on the
// endpoint (pass them to webhook.NewServer, as manager.Options.WebhookServer).
func (e *WebhookEndpoint) ServerOptions() ctrlwebhook.Options {
	return ctrlwebhook.Options{
		Host:     e.Host,
		Port:     e.Port,
		CertDir:  e.CertDir,
		CertName: WebhookCertFile,
		KeyName:  WebhookKeyFile,
	}
}

// newWebhookServingCert returns a new CA and a serving certificate it signed for the loopback
// names, all PEM.
func newWebhookServingCert() (caPEM, certPEM, keyPEM []byte, err error) {
	now := time.Now()
	caKey, err := newKey()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("generating CA key: %w", err)
	}
	caTemplate := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "mcr-envtest-webhook-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("signing CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("parsing CA certificate: %w", err)
	}
	key, err := newKey()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("generating serving key: %w", err)
	}
	der, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "mcr-envtest-webhook"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(certValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:     []string{"localhost"},
	}, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("signing serving certificate: %w", err)
	}
	if keyPEM, err = ecKeyPEM(key); err != nil {
		return nil, nil, nil, err
	}
	return pemBlock("CERTIFICATE", caDER), pemBlock("CERTIFICATE", der), keyPEM, nil
}
