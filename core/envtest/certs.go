// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package envtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Certificates live for a year: long enough for any test run or a developer's long-lived fleet,
// and they are never written outside the fleet's temporary directory.
const certValidity = 365 * 24 * time.Hour

// memberCredentials are one member's keys and certificates. Each member has its own CA, so a
// client that mixes up clusters fails TLS verification just as it would against real clusters.
type memberCredentials struct {
	caPEM          []byte
	servingCertPEM []byte
	servingKeyPEM  []byte
	adminCertPEM   []byte
	adminKeyPEM    []byte
	saPublicPEM    []byte
	saPrivatePEM   []byte
}

// ECDSA P-256 keys everywhere: generating them takes microseconds (RSA 2048 takes tens of
// milliseconds per key), and kube-apiserver accepts them for serving, client certificates and
// service-account token signing (ES256).
func newKey() (*ecdsa.PrivateKey, error) {
	return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
}

func newMemberCredentials(member string) (*memberCredentials, error) {
	now := time.Now()

	caKey, err := newKey()
	if err != nil {
		return nil, fmt.Errorf("generating CA key: %w", err)
	}
	caTemplate := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "mcr-envtest-ca-" + member},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("signing CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, fmt.Errorf("parsing CA certificate: %w", err)
	}

	issue := func(tmpl *x509.Certificate) (certPEM, keyPEM []byte, err error) {
		key, err := newKey()
		if err != nil {
			return nil, nil, err
		}
		tmpl.SerialNumber = serial()
		tmpl.NotBefore = now.Add(-time.Hour)
		tmpl.NotAfter = now.Add(certValidity)
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			return nil, nil, err
		}
		keyPEM, err = ecKeyPEM(key)
		if err != nil {
			return nil, nil, err
		}
		return pemBlock("CERTIFICATE", der), keyPEM, nil
	}

	creds := &memberCredentials{caPEM: pemBlock("CERTIFICATE", caDER)}
	creds.servingCertPEM, creds.servingKeyPEM, err = issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		// The names a client may use: loopback, and the in-cluster names of the kubernetes
		// Service (10.0.0.1 is the first address of the default service range).
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback, net.IPv4(10, 0, 0, 1)},
		DNSNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
			"kubernetes.default.svc.cluster.local"},
	})
	if err != nil {
		return nil, fmt.Errorf("issuing serving certificate: %w", err)
	}
	creds.adminCertPEM, creds.adminKeyPEM, err = issue(&x509.Certificate{
		// system:masters is bound to cluster-admin by the bootstrap RBAC policy.
		Subject:     pkix.Name{CommonName: "mcr-envtest-admin", Organization: []string{"system:masters"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return nil, fmt.Errorf("issuing admin client certificate: %w", err)
	}

	saKey, err := newKey()
	if err != nil {
		return nil, fmt.Errorf("generating service-account signing key: %w", err)
	}
	if creds.saPrivatePEM, err = ecKeyPEM(saKey); err != nil {
		return nil, err
	}
	saPub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("encoding service-account public key: %w", err)
	}
	creds.saPublicPEM = pemBlock("PUBLIC KEY", saPub)
	return creds, nil
}

// Paths of the credential files inside a member's directory.
const (
	caFile          = "ca.crt"
	servingCertFile = "apiserver.crt"
	servingKeyFile  = "apiserver.key"
	saPublicFile    = "sa.pub"
	saPrivateFile   = "sa.key"
)

func (c *memberCredentials) writeFiles(dir string) error {
	files := map[string][]byte{
		caFile:          c.caPEM,
		servingCertFile: c.servingCertPEM,
		servingKeyFile:  c.servingKeyPEM,
		saPublicFile:    c.saPublicPEM,
		saPrivateFile:   c.saPrivatePEM,
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
	}
	return nil
}

// adminTLSConfig is what the fleet itself uses to probe readiness.
func (c *memberCredentials) adminTLSConfig() (*tls.Config, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(c.caPEM) {
		return nil, fmt.Errorf("parsing CA certificate")
	}
	cert, err := tls.X509KeyPair(c.adminCertPEM, c.adminKeyPEM)
	if err != nil {
		return nil, fmt.Errorf("loading admin client certificate: %w", err)
	}
	return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

func ecKeyPEM(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encoding private key: %w", err)
	}
	return pemBlock("EC PRIVATE KEY", der), nil
}

func pemBlock(kind string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		// crypto/rand does not fail on supported platforms; a fixed serial would still work.
		return big.NewInt(1)
	}
	return n
}

// SelfSignedClientCertificate returns a client certificate for commonName, signed by its own
// key, and that key, both in PEM: credentials that no apiserver trusts, for tests that need a
// certificate of another identity or one to plant and look for.
func SelfSignedClientCertificate(commonName string) (certPEM, keyPEM []byte, err error) {
	key, err := newKey()
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: commonName},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("signing the client certificate: %w", err)
	}
	if keyPEM, err = ecKeyPEM(key); err != nil {
		return nil, nil, err
	}
	return pemBlock("CERTIFICATE", der), keyPEM, nil
}
