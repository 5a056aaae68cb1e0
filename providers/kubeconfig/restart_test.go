// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kubeconfig_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
	"mcr.dev/providers/kubeconfig"
)

// TestHostRestart stops the host apiserver while members are engaged, for longer than the
// provider's CacheSyncTimeout, and starts it again: the engaged members stay engaged through
// the outage, and a Secret added and one deleted after the restart are engaged and disengaged.
// It has a fleet of its own, since a host outage would disturb every other test of the package.
func TestHostRestart(t *testing.T) {
	// Its fleet is its own: it runs alongside the other parallel tests.
	t.Parallel()
	f := envtest.StartForTest(t, "host", "member")
	host := f.Member("host")
	client := kubernetes.NewForConfigOrDie(host.Config())
	const ns = "mcr-system"
	if _, err := client.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	put := func(name string) {
		t.Helper()
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{kubeconfig.DefaultSecretLabel: "true"}},
			Data:       map[string][]byte{kubeconfig.DefaultSecretKey: f.Member("member").Kubeconfig()},
		}
		if _, err := client.CoreV1().Secrets(ns).Create(t.Context(), s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	const cacheSyncTimeout = 5 * time.Second
	opts := testOptions(ns)
	opts.CacheSyncTimeout = cacheSyncTimeout
	p, err := kubeconfig.New(host.Config(), opts)
	if err != nil {
		t.Fatal(err)
	}
	aware := newRecordingAware()
	startProvider(t, p, aware)
	put("stays")
	put("removed")
	stays := aware.waitEngaged(t, "stays", 1)
	removed := aware.waitEngaged(t, "removed", 1)

	if err := host.Stop(); err != nil {
		t.Fatal(err)
	}
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			_ = host.Start(context.Background())
		}
	})
	// Down for three CacheSyncTimeouts: long enough for anything bounded by it to give up.
	outage := 3 * cacheSyncTimeout
	deadline := time.Now().Add(outage)
	for time.Now().Before(deadline) {
		for name, e := range map[multicluster.ClusterName]*engagement{"stays": stays, "removed": removed} {
			if !e.Alive() {
				t.Fatalf("cluster %q was disengaged while the host was down", name)
			}
			if got, err := p.Get(t.Context(), name); err != nil || got != e.Cluster {
				t.Fatalf("Get(%q) while the host was down = %v, %v; want the engaged cluster", name, got, err)
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := canListNamespaces(t.Context(), stays); err != nil {
		t.Errorf("an engaged member stopped working while the host was down: %v", err)
	}

	if err := host.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	restarted = true
	back := time.Now()
	put("added")
	if err := client.CoreV1().Secrets(ns).Delete(t.Context(), "removed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// client-go's reflectors back off up to 30 s, with jitter up to twice that, while the host
	// is down: their next attempt may come a minute after the restart. waitEngaged allows 90 s.
	aware.waitEngaged(t, "added", 1)
	t.Logf("a Secret created after the restart was engaged %s after the host was back", time.Since(back).Round(time.Millisecond))
	eventually(t, waitTimeout, "removed disengaged", func() error {
		if removed.Alive() {
			return errors.New("its engagement is alive")
		}
		if _, err := p.Get(t.Context(), "removed"); !errors.Is(err, multicluster.ErrClusterNotFound) {
			return fmt.Errorf("Get = %v, want ErrClusterNotFound", err)
		}
		return nil
	})
	t.Logf("a Secret deleted after the restart was disengaged %s after the host was back", time.Since(back).Round(time.Millisecond))
	if !stays.Alive() || aware.count("stays") != 1 {
		t.Errorf("the member that stayed was disengaged or engaged again (%d engagements)", aware.count("stays"))
	}
}
