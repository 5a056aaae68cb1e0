// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterapi_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/clusterapi"
)

// TestHostRestart stops the management cluster's apiserver while Clusters are engaged, for
// longer than the provider's CacheSyncTimeout, and starts it again: the engaged Clusters stay
// engaged through the outage, and a Cluster added and one deleted after the restart are
// engaged and disengaged. It has a fleet of its own, since a host outage would disturb every
// other test of the package.
func TestHostRestart(t *testing.T) {
	// Its fleet is its own: it runs alongside the other parallel tests.
	t.Parallel()
	f := envtest.StartForTest(t, "host", "member")
	host := f.Member("host")
	if err := installCRD(t.Context(), host.Config()); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(host.Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	const ns = "fleet"
	if err := c.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	ready := func(name string) {
		t.Helper()
		if err := createReadyCluster(t.Context(), c, ns, name, f.Member("member").Kubeconfig()); err != nil {
			t.Fatal(err)
		}
	}

	const cacheSyncTimeout = 5 * time.Second
	logs := &logBuffer{}
	p, err := clusterapi.New(host.Config(), clusterapi.Options{
		Namespaces: []string{ns},
		Options: kit.Options{
			CacheSyncTimeout: cacheSyncTimeout,
			RetryMinDelay:    100 * time.Millisecond,
			RetryMaxDelay:    2 * time.Second,
			Logger:           logs.Logger(),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := runProvider(t, p, logs)
	ready("stays")
	ready("removed")
	stays := s.waitEngaged(t, clusterapi.ClusterName(ns, "stays"))
	removed := s.waitEngaged(t, clusterapi.ClusterName(ns, "removed"))

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
	deadline := time.Now().Add(3 * cacheSyncTimeout)
	for time.Now().Before(deadline) {
		for _, e := range []*engagement{stays, removed} {
			if !e.Alive() {
				t.Fatalf("a Cluster was disengaged while the host was down; engaged: %v", s.rec.Engaged())
			}
		}
		for _, name := range []string{"stays", "removed"} {
			if _, err := p.Get(t.Context(), clusterapi.ClusterName(ns, name)); err != nil {
				t.Fatalf("Get(%s) while the host was down: %v", name, err)
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	var cms corev1.ConfigMapList
	if err := stays.Cluster.GetAPIReader().List(t.Context(), &cms); err != nil {
		t.Errorf("an engaged member stopped working while the host was down: %v", err)
	}

	if err := host.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	restarted = true
	back := time.Now()
	ready("added")
	if err := c.Delete(t.Context(), &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "removed"}}); err != nil {
		t.Fatal(err)
	}
	// client-go's reflectors back off up to 30 s, with jitter up to twice that, while the host
	// is down: their next attempt may come a minute after the restart.
	const recovery = 90 * time.Second
	added := clusterapi.ClusterName(ns, "added")
	providertest.Eventually(t, recovery, "the Cluster added after the restart engaged", func() error {
		if e, _ := s.rec.Latest(added); !e.Alive() {
			return fmt.Errorf("not engaged; engaged: %v", s.rec.Engaged())
		}
		return nil
	})
	t.Logf("a Cluster created after the restart was engaged %s after the host was back", time.Since(back).Round(time.Millisecond))
	providertest.Eventually(t, recovery, "the Cluster deleted after the restart disengaged", func() error {
		if removed.Alive() {
			return errors.New("its engagement is alive")
		}
		if _, err := p.Get(t.Context(), clusterapi.ClusterName(ns, "removed")); !errors.Is(err, multicluster.ErrClusterNotFound) {
			return fmt.Errorf("Get = %v, want ErrClusterNotFound", err)
		}
		return nil
	})
	t.Logf("a Cluster deleted after the restart was disengaged %s after the host was back", time.Since(back).Round(time.Millisecond))
	if latest, n := s.rec.Latest(clusterapi.ClusterName(ns, "stays")); latest != stays || n != 1 || !stays.Alive() {
		t.Errorf("the Cluster that stayed was disengaged or engaged again (%d engagements)", n)
	}
}

// createReadyCluster creates, through c, the kubeconfig Secret and a ready (control plane
// initialized) v1beta2 Cluster ns/name.
func createReadyCluster(ctx context.Context, c client.Client, ns, name string, kubeconfig []byte) error {
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: clusterapi.KubeconfigSecretName(name),
			Labels: map[string]string{clusterapi.ClusterNameLabel: name},
		},
		Type: clusterv1.ClusterSecretType,
		Data: map[string][]byte{clusterapi.KubeconfigDataKey: kubeconfig},
	}
	if err := c.Create(ctx, secret); err != nil {
		return fmt.Errorf("creating the kubeconfig Secret of %s: %w", name, err)
	}
	obj := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: clusterv1.ClusterSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{
			APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "DockerCluster", Name: name,
		}},
	}
	if err := c.Create(ctx, obj); err != nil {
		return fmt.Errorf("creating Cluster %s: %w", name, err)
	}
	obj.Status.Initialization.ControlPlaneInitialized = ptr.To(true)
	if err := c.Status().Update(ctx, obj); err != nil {
		return fmt.Errorf("setting Cluster %s initialized: %w", name, err)
	}
	return nil
}
