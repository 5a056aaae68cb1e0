// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package file_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/file"
)

// fleet is shared by the tests of this package: starting apiservers is the slow part. The
// package's own tests use east and west; the conformance suite uses all three.
var fleet *envtest.Fleet

func TestMain(m *testing.M) {
	providertest.Main(m, providertest.MainOptions{Members: []string{"east", "west", "north"}}, func(f *envtest.Fleet) error {
		fleet = f
		return nil
	})
}

// waitTimeout bounds every wait for the provider to catch up with a change.
const waitTimeout = time.Minute

// engagement is one Engage call seen by the recorder.
type engagement = providertest.Engagement

// started is a running provider.
type started struct {
	*providertest.Session
	provider *file.Provider
	rec      *providertest.Recorder
	stop     func()
}

// start runs a provider for opts until the test ends (or stop is called).
func start(t *testing.T, opts file.Options) *started {
	t.Helper()
	if opts.Debounce == 0 {
		opts.Debounce = 50 * time.Millisecond
	}
	if opts.CacheSyncTimeout == 0 {
		opts.CacheSyncTimeout = 20 * time.Second
	}
	p, err := file.New(opts)
	if err != nil {
		t.Fatalf("file.New: %v", err)
	}
	s := providertest.StartSession(t, p, nil, waitTimeout)
	return &started{Session: s, provider: p, rec: s.Recorder, stop: s.Stop}
}

// eventually polls cond until it returns nil, failing the test with its last error after
// waitTimeout.
func eventually(t *testing.T, what string, cond func() error) {
	t.Helper()
	providertest.Eventually(t, waitTimeout, what, cond)
}

// waitEngaged waits until exactly names are engaged.
func (s *started) waitEngaged(t *testing.T, names ...multicluster.ClusterName) {
	t.Helper()
	slices.Sort(names)
	eventually(t, fmt.Sprintf("engaged clusters %v", names), func() error {
		got := s.rec.Engaged()
		if !slices.Equal(got, names) {
			return fmt.Errorf("engaged: %v", got)
		}
		for _, name := range names {
			if _, err := s.provider.Get(context.Background(), name); err != nil {
				return err
			}
		}
		return nil
	})
}

// snapshot remembers the current engagement of each name.
func (s *started) snapshot(t *testing.T, names ...multicluster.ClusterName) map[multicluster.ClusterName]*engagement {
	t.Helper()
	out := map[multicluster.ClusterName]*engagement{}
	for _, name := range names {
		e, _ := s.rec.Latest(name)
		if e == nil || e.Ctx.Err() != nil {
			t.Fatalf("cluster %q is not engaged", name)
		}
		out[name] = e
	}
	return out
}

// requireUntouched fails unless every cluster of before is still engaged through the very same
// engagement: same instance, engage context alive, no Engage call since.
func (s *started) requireUntouched(t *testing.T, before map[multicluster.ClusterName]*engagement) {
	t.Helper()
	for name, e := range before {
		s.RequireUntouched(t, name, e)
	}
}

// requireReaches fails unless the engaged cluster of name answers as member: it lists
// ConfigMaps through the cluster's own client, uncached, against the real apiserver.
func (s *started) requireReaches(t *testing.T, name multicluster.ClusterName, member string) {
	t.Helper()
	s.RequireReaches(t, name, fleet.Member(member).Host())
}

// memberConfig returns the admin kubeconfig of member with its cluster, user and context renamed
// to contextName.
func memberConfig(t *testing.T, member, contextName string) *clientcmdapi.Config {
	t.Helper()
	return renamed(t, fleet.Member(member).Kubeconfig(), member, contextName)
}

// serviceAccountConfig returns a ServiceAccount token kubeconfig of member (read access to
// namespaces and ConfigMaps) with its entries renamed to contextName.
func serviceAccountConfig(t *testing.T, member, contextName string) *clientcmdapi.Config {
	t.Helper()
	data, err := fleet.Member(member).ServiceAccountKubeconfig(t.Context(), envtest.ServiceAccountOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return renamed(t, data, member, contextName)
}

func renamed(t *testing.T, data []byte, from, to string) *clientcmdapi.Config {
	t.Helper()
	cfg, err := clientcmd.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	out := clientcmdapi.NewConfig()
	out.Clusters[to] = cfg.Clusters[from]
	out.AuthInfos[to] = cfg.AuthInfos[from]
	out.Contexts[to] = &clientcmdapi.Context{Cluster: to, AuthInfo: to}
	out.CurrentContext = to
	return out
}

// merged combines kubeconfigs (with distinct entry names) into one document.
func merged(t *testing.T, cfgs ...*clientcmdapi.Config) []byte {
	t.Helper()
	out := clientcmdapi.NewConfig()
	for _, c := range cfgs {
		for k, v := range c.Clusters {
			out.Clusters[k] = v
		}
		for k, v := range c.AuthInfos {
			out.AuthInfos[k] = v
		}
		for k, v := range c.Contexts {
			out.Contexts[k] = v
		}
		if out.CurrentContext == "" {
			out.CurrentContext = c.CurrentContext
		}
	}
	data, err := clientcmd.Write(*out)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// writeAtomic replaces path with data the way careful tools do: a temporary file renamed over it.
func writeAtomic(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tmp.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := tmp.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		t.Fatal(err)
	}
}

// logBuffer collects log lines for assertions.
type logBuffer = providertest.LogBuffer
