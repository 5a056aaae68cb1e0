// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package gardentest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"

	"mcr.dev/core/envtest"

	"k8s.io/client-go/rest"
)

// kubeAPIServer is one kube-apiserver of the garden: the garden cluster itself or a shoot's.
type kubeAPIServer struct {
	name string
	// frontProxyCA, if set, makes the server an aggregator: it signs the client certificate with
	// which the server proxies to aggregated servers, and those trust it.
	frontProxyCA *authority

	port      int
	dir       string
	ca        *authority // serves and signs the admin client certificate
	adminCert []byte
	adminKey  []byte
	proc      *envtest.Process
}

// Files in a server's directory.
const (
	clientCAFile = "client-ca.crt" // the CAs whose client certificates the server accepts
)

func pkixName(cn string, org ...string) pkix.Name {
	return pkix.Name{CommonName: cn, Organization: org}
}

// start starts the server and returns once /readyz and the default namespace answer.
func (s *kubeAPIServer) start(ctx context.Context, dir, path, etcdURL string, out io.Writer) error {
	s.dir = dir
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	var err error
	if s.ca, err = newAuthority("mcr-gardentest-"+s.name+"-ca", false); err != nil {
		return err
	}
	serving, servingKey, err := s.ca.issue(&x509.Certificate{
		Subject:     pkixName("kube-apiserver"),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv4(10, 0, 0, 1)},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
	})
	if err != nil {
		return err
	}
	// system:masters is bound to cluster-admin by the bootstrap policy.
	if s.adminCert, s.adminKey, err = s.ca.clientCert("mcr-gardentest-admin", "system:masters"); err != nil {
		return err
	}
	_, saKey, err := newECKey()
	if err != nil {
		return err
	}
	files := map[string][]byte{
		"ca.crt": s.ca.certPEM, clientCAFile: s.ca.certPEM,
		"tls.crt": serving, "tls.key": servingKey, "sa.key": saKey,
	}
	if s.port, err = envtest.FreePort(); err != nil {
		return err
	}
	args := []string{
		"--advertise-address=127.0.0.1",
		"--allow-privileged=true",
		"--authorization-mode=RBAC",
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(s.port),
		"--cert-dir=" + dir,
		"--tls-cert-file=" + filepath.Join(dir, "tls.crt"),
		"--tls-private-key-file=" + filepath.Join(dir, "tls.key"),
		"--client-ca-file=" + filepath.Join(dir, clientCAFile),
		"--etcd-servers=" + etcdURL,
		"--etcd-prefix=/realgarden/" + s.name,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + filepath.Join(dir, "sa.key"),
		"--service-account-signing-key-file=" + filepath.Join(dir, "sa.key"),
		"--service-cluster-ip-range=10.0.0.0/24",
		"--endpoint-reconciler-type=none",
		"--enable-priority-and-fairness=false",
		"--profiling=false",
	}
	if s.frontProxyCA != nil {
		proxyCert, proxyKey, err := s.frontProxyCA.clientCert("front-proxy-client")
		if err != nil {
			return err
		}
		files["front-proxy-ca.crt"] = s.frontProxyCA.certPEM
		files["front-proxy-client.crt"], files["front-proxy-client.key"] = proxyCert, proxyKey
		args = append(args,
			"--requestheader-client-ca-file="+filepath.Join(dir, "front-proxy-ca.crt"),
			"--requestheader-allowed-names=front-proxy-client",
			"--requestheader-username-headers=X-Remote-User",
			"--requestheader-group-headers=X-Remote-Group",
			"--requestheader-extra-headers-prefix=X-Remote-Extra-",
			"--proxy-client-cert-file="+filepath.Join(dir, "front-proxy-client.crt"),
			"--proxy-client-key-file="+filepath.Join(dir, "front-proxy-client.key"),
		)
	}
	if err := writeFiles(dir, files); err != nil {
		return err
	}
	if s.proc, err = envtest.StartProcess(s.name, path, args, out); err != nil {
		return err
	}
	hc := httpClient(s.tlsConfig())
	for _, p := range []string{"/readyz", "/api/v1/namespaces/default"} {
		if err := waitOK(ctx, s.proc, hc, s.host()+p); err != nil {
			return fmt.Errorf("kube-apiserver %s: %w", s.name, err)
		}
	}
	return nil
}

func (s *kubeAPIServer) host() string { return "https://127.0.0.1:" + strconv.Itoa(s.port) }

func (s *kubeAPIServer) config() *rest.Config {
	return &rest.Config{
		Host: s.host(),
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   append([]byte(nil), s.ca.certPEM...),
			CertData: append([]byte(nil), s.adminCert...),
			KeyData:  append([]byte(nil), s.adminKey...),
		},
		QPS: 100, Burst: 200,
	}
}

func (s *kubeAPIServer) kubeconfig() ([]byte, error) {
	return kubeconfigFor(s.name, s.host(), s.ca.certPEM, s.adminCert, s.adminKey)
}

func (s *kubeAPIServer) tlsConfig() *tls.Config {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.ca.certPEM)
	cert, err := tls.X509KeyPair(s.adminCert, s.adminKey)
	if err != nil {
		// The pair was made in start from valid PEM.
		panic(fmt.Sprintf("gardentest: admin certificate of %s: %v", s.name, err))
	}
	return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
}

func newGet(ctx context.Context, url string) (*http.Request, error) {
	return http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
}
