// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package providertest

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
)

// Provider is a provider a test starts and reads from.
type Provider interface {
	multicluster.Provider
	multicluster.ProviderRunnable
}

// Session is a provider started by StartSession, with the log buffer it writes to: the waits a
// provider's white-box tests share, bounded by one timeout.
type Session struct {
	// Running has the Recorder the provider engages clusters with, and Stop.
	*Running
	// Provider is the running provider.
	Provider Provider
	// Logs is the provider's log.
	Logs *LogBuffer
	// Timeout bounds every wait and the provider's shutdown.
	Timeout time.Duration
}

// StartSession runs p (which logs to logs) until the test ends, as Start does.
func StartSession(t testing.TB, p Provider, logs *LogBuffer, timeout time.Duration) *Session {
	t.Helper()
	return &Session{Running: Start(t, p, timeout), Provider: p, Logs: logs, Timeout: timeout}
}

// TestKitOptions fills what o leaves unset with values for tests: a CacheSyncTimeout of 20 s,
// retries from 100 ms to 2 s, so that a test sees a failure retried quickly; and it sets the
// Logger to logs unless logs is nil.
func TestKitOptions(o kit.Options, logs *LogBuffer) kit.Options {
	if o.CacheSyncTimeout == 0 {
		o.CacheSyncTimeout = 20 * time.Second
	}
	if o.RetryMinDelay == 0 {
		o.RetryMinDelay = 100 * time.Millisecond
		o.RetryMaxDelay = 2 * time.Second
	}
	if logs != nil {
		o.Logger = logs.Logger()
	}
	return o
}

// WaitEngaged is Recorder.WaitEngaged for the session's provider.
func (s *Session) WaitEngaged(t testing.TB, name multicluster.ClusterName) *Engagement {
	t.Helper()
	return s.Recorder.WaitEngaged(t, s.Provider, name, s.Timeout)
}

// WaitDisengaged is Recorder.WaitDisengaged for the session's provider.
func (s *Session) WaitDisengaged(t testing.TB, name multicluster.ClusterName, e *Engagement) {
	t.Helper()
	s.Recorder.WaitDisengaged(t, s.Provider, name, e, s.Timeout)
}

// WaitLogged waits until a log line about the cluster name contains every part, and returns it.
func (s *Session) WaitLogged(t testing.TB, name multicluster.ClusterName, parts ...string) string {
	t.Helper()
	var line string
	Eventually(t, s.Timeout, fmt.Sprintf("log about %q with %q", name, parts), func() error {
		var err error
		line, err = s.Logs.Find(append([]string{`"cluster"="` + string(name) + `"`}, parts...)...)
		return err
	})
	return line
}

// RequireReaches fails the test unless the provider's cluster name talks to the apiserver at
// host and lists ConfigMaps in namespace default there with the credentials it was given.
func (s *Session) RequireReaches(t testing.TB, name multicluster.ClusterName, host string) {
	t.Helper()
	cl, err := s.Provider.Get(context.Background(), name)
	if err != nil {
		t.Fatalf("Get(%q): %v", name, err)
	}
	if got := cl.GetConfig().Host; got != host {
		t.Errorf("cluster %q talks to %s, want %s", name, got, host)
	}
	var cms corev1.ConfigMapList
	if err := cl.GetAPIReader().List(context.Background(), &cms, client.InNamespace("default")); err != nil {
		t.Errorf("cluster %q: listing ConfigMaps on %s: %v", name, host, err)
	}
}

// RequireUntouched fails the test unless e is still the live engagement of name: the same
// instance, its context alive, no Engage since, and Get returns it. For a cluster whose source
// did not change (or changed in nothing that matters).
func (s *Session) RequireUntouched(t testing.TB, name multicluster.ClusterName, e *Engagement) {
	t.Helper()
	if now, _ := s.Recorder.Latest(name); now != e {
		t.Errorf("cluster %q was engaged again, although nothing about it changed", name)
	}
	if err := e.Ctx.Err(); err != nil {
		t.Errorf("cluster %q was disengaged (%v), although nothing about it changed", name, err)
	}
	if got, err := s.Provider.Get(context.Background(), name); err != nil || got != e.Cluster {
		t.Errorf("Get(%q) = %v, %v; want the engaged instance", name, got, err)
	}
}
