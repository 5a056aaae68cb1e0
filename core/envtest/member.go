// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package envtest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Client rate limits of the configs handed out: far above client-go's defaults (5 QPS, burst
// 10), which would throttle tests that create many objects, yet still finite.
const (
	clientQPS   = 100
	clientBurst = 200
)

// Member is one kube-apiserver of a fleet: a cluster of its own, with its own CA, admin
// credentials and etcd prefix. All methods are safe for concurrent use.
type Member struct {
	fleet      *Fleet
	name       string
	dir        string
	etcdPrefix string
	creds      *memberCredentials
	port       int // chosen on the first start, then kept so clients reconnect after a restart

	lifecycle sync.Mutex // serializes Start, Stop and removal
	removed   bool
	proc      atomic.Pointer[Process]
}

// Name returns the member's name, as given to the fleet.
func (m *Member) Name() string { return m.name }

// Host returns the URL of the member's kube-apiserver, https://127.0.0.1:<port>.
func (m *Member) Host() string { return "https://127.0.0.1:" + strconv.Itoa(m.port) }

// Config returns a new admin rest.Config for the member (client certificate in system:masters,
// the member's CA, QPS 100 and burst 200). Callers may modify it.
func (m *Member) Config() *rest.Config {
	return &rest.Config{
		Host: m.Host(),
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   append([]byte(nil), m.creds.caPEM...),
			CertData: append([]byte(nil), m.creds.adminCertPEM...),
			KeyData:  append([]byte(nil), m.creds.adminKeyPEM...),
		},
		QPS:   clientQPS,
		Burst: clientBurst,
	}
}

// Kubeconfig returns an admin kubeconfig for the member with credentials embedded. Its
// cluster, user and current context are all named after the member.
func (m *Member) Kubeconfig() []byte {
	data, err := m.kubeconfig(&clientcmdapi.AuthInfo{
		ClientCertificateData: m.creds.adminCertPEM,
		ClientKeyData:         m.creds.adminKeyPEM,
	})
	if err != nil {
		// Serializing an in-memory config of plain strings and bytes does not fail.
		panic(fmt.Sprintf("envtest: encoding kubeconfig of %q: %v", m.name, err))
	}
	return data
}

func (m *Member) kubeconfig(user *clientcmdapi.AuthInfo) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[m.name] = &clientcmdapi.Cluster{
		Server:                   m.Host(),
		CertificateAuthorityData: m.creds.caPEM,
	}
	cfg.AuthInfos[m.name] = user
	cfg.Contexts[m.name] = &clientcmdapi.Context{Cluster: m.name, AuthInfo: m.name}
	cfg.CurrentContext = m.name
	return clientcmd.Write(*cfg)
}

// Running reports whether the member's kube-apiserver process is running.
func (m *Member) Running() bool {
	p := m.proc.Load()
	return p != nil && !p.Exited()
}

// Start starts the member's kube-apiserver if it is not running, and returns once /readyz
// answers ok. After a Stop, the apiserver comes back on the same address with the same
// certificates and etcd prefix, so its data is still there and existing clients reconnect.
// ctx bounds the wait only; Options.StartTimeout applies as well.
func (m *Member) Start(ctx context.Context) error {
	m.lifecycle.Lock()
	defer m.lifecycle.Unlock()
	if m.removed {
		return fmt.Errorf("envtest: starting member %q: it was removed from the fleet", m.name)
	}
	if m.Running() {
		return nil
	}
	f := m.fleet
	ctx, cancel := context.WithTimeout(ctx, f.opts.StartTimeout)
	defer cancel()

	firstStart := m.port == 0
	attempts := 1
	if firstStart {
		attempts = portAttempts
	}
	var lastErr error
	for range attempts {
		if firstStart {
			port, err := FreePort()
			if err != nil {
				return fmt.Errorf("envtest: starting member %q: %w", m.name, err)
			}
			m.port = port
		}
		p, err := m.startProcess()
		if err != nil {
			return err
		}
		err = m.waitReady(ctx, p)
		if err == nil {
			m.proc.Store(p)
			return nil
		}
		lastErr = errors.Join(err, p.Stop(f.opts.StopGracePeriod))
		if !firstStart || !portInUse(p) {
			break
		}
	}
	if firstStart {
		m.port = 0
	}
	return fmt.Errorf("envtest: starting member %q: %w", m.name, lastErr)
}

// Stop stops the member's kube-apiserver (SIGTERM, then SIGKILL after
// Options.StopGracePeriod). Requests to the member fail until Start. Stopping a stopped member
// does nothing.
func (m *Member) Stop() error {
	m.lifecycle.Lock()
	defer m.lifecycle.Unlock()
	return m.stopLocked()
}

func (m *Member) stopLocked() error {
	p := m.proc.Swap(nil)
	if p == nil {
		return nil
	}
	if err := p.Stop(m.fleet.opts.StopGracePeriod); err != nil {
		return fmt.Errorf("envtest: stopping member %q: %w", m.name, err)
	}
	return nil
}

// remove stops the member for good and deletes its directory.
func (m *Member) remove() error {
	m.lifecycle.Lock()
	defer m.lifecycle.Unlock()
	m.removed = true
	err := m.stopLocked()
	if rmErr := os.RemoveAll(m.dir); rmErr != nil {
		err = errors.Join(err, fmt.Errorf("envtest: removing %s: %w", m.dir, rmErr))
	}
	return err
}

func (m *Member) startProcess() (*Process, error) {
	f := m.fleet
	args, err := mergeFlags(DefaultAPIServerFlags(), f.opts.APIServerFlags, managedAPIServerFlags)
	if err != nil {
		return nil, err
	}
	args = append(args, flagList(map[string]string{
		"bind-address":                     "127.0.0.1",
		"secure-port":                      strconv.Itoa(m.port),
		"cert-dir":                         m.dir,
		"tls-cert-file":                    filepath.Join(m.dir, servingCertFile),
		"tls-private-key-file":             filepath.Join(m.dir, servingKeyFile),
		"client-ca-file":                   filepath.Join(m.dir, caFile),
		"etcd-servers":                     f.etcdURL,
		"etcd-prefix":                      m.etcdPrefix,
		"service-account-key-file":         filepath.Join(m.dir, saPublicFile),
		"service-account-signing-key-file": filepath.Join(m.dir, saPrivateFile),
	})...)
	p, err := StartProcess(m.name, f.apiserverPath, args, f.out)
	if err != nil {
		return nil, fmt.Errorf("envtest: %w", err)
	}
	return p, nil
}

// readinessPaths must all answer 200 before a member counts as started. /readyz covers
// storage, RBAC bootstrap and the post-start hooks; the default namespace is created by a
// controller that /readyz does not wait for, and tests expect to use it at once.
var readinessPaths = []string{"/readyz", "/api/v1/namespaces/default"}

func (m *Member) waitReady(ctx context.Context, p *Process) error {
	tlsConfig, err := m.creds.adminTLSConfig()
	if err != nil {
		return err
	}
	transport := &http.Transport{TLSClientConfig: tlsConfig, DisableKeepAlives: true}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport, Timeout: 5 * time.Second}
	return p.WaitUntil(ctx, func() error {
		for _, path := range readinessPaths {
			if err := ProbeOK(ctx, client, m.Host()+path); err != nil {
				return err
			}
		}
		return nil
	})
}

func waitEtcdReady(ctx context.Context, p *Process, clientURL string) error {
	transport := &http.Transport{DisableKeepAlives: true}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport, Timeout: 5 * time.Second}
	return p.WaitUntil(ctx, func() error { return ProbeOK(ctx, client, clientURL+"/health") })
}
