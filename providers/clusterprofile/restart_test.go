// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterprofile_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"mcr.dev/core/envtest"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/clusterprofile"
)

// TestHostRestart stops the hub's apiserver while profiles are engaged, for longer than the
// provider's CacheSyncTimeout, and starts it again: the engaged members stay engaged through
// the outage (their engagement contexts stay alive), and after the restart the provider
// engages a profile created and disengages one deleted on the hub. It runs on a fleet of its
// own, so that the outage disturbs no other test.
func TestHostRestart(t *testing.T) {
	t.Parallel()
	const cacheSyncTimeout = 5 * time.Second
	f := envtest.StartForTest(t, "hub", "member")
	hubMember := f.Member("hub")
	if err := installCRD(t.Context(), hubMember.Config()); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(hubMember.Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	const ns = "fleet"
	if err := c.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	// add creates a healthy profile whose kubeconfig Secret reaches the member.
	add := func(ctx context.Context, name string) error {
		data, err := f.Member("member").ServiceAccountKubeconfig(ctx, envtest.ServiceAccountOptions{Name: name})
		if err != nil {
			return err
		}
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-kubeconfig", Labels: map[string]string{
				clusterprofile.SecretLabelConsumer: consumer, clusterprofile.SecretLabelProfile: name,
			}},
			Data: map[string][]byte{clusterprofile.SecretDataKey: data},
		}
		if err := c.Create(ctx, secret); err != nil {
			return err
		}
		cp := &v1alpha1.ClusterProfile{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec:       v1alpha1.ClusterProfileSpec{ClusterManager: v1alpha1.ClusterManager{Name: "test-manager"}},
		}
		if err := c.Create(ctx, cp); err != nil {
			return err
		}
		cp.Status = healthyStatus()
		return c.Status().Update(ctx, cp)
	}
	for _, name := range []string{"stays", "goes"} {
		if err := add(t.Context(), name); err != nil {
			t.Fatal(err)
		}
	}

	logs := &logBuffer{}
	p, err := clusterprofile.New(hubMember.Config(), clusterprofile.Options{
		Secret: &clusterprofile.SecretStrategy{ConsumerName: consumer},
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
	stays, goes := clusterprofile.ClusterName(ns, "stays"), clusterprofile.ClusterName(ns, "goes")
	staysEng := s.waitEngaged(t, stays)
	goesEng := s.waitEngaged(t, goes)

	// The outage: twice CacheSyncTimeout.
	if err := hubMember.Stop(); err != nil {
		t.Fatal(err)
	}
	outage := 2 * cacheSyncTimeout
	for deadline := time.Now().Add(outage); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		if !staysEng.Alive() || !goesEng.Alive() {
			t.Fatal("an engaged member was disengaged while the hub was down")
		}
	}
	if err := hubMember.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()

	// After the restart: a new profile is engaged, a deleted one disengaged.
	if err := add(t.Context(), "new"); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(t.Context(), &v1alpha1.ClusterProfile{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "goes"}}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	newName := clusterprofile.ClusterName(ns, "new")
	providertest.Eventually(t, 90*time.Second, "the new profile engaged after the restart", func() error {
		_, err := p.Get(t.Context(), newName)
		return err
	})
	t.Logf("new profile engaged %s after the restart", time.Since(restarted).Round(100*time.Millisecond))
	s.waitDisengaged(t, goes, goesEng)
	t.Logf("deleted profile disengaged %s after the restart", time.Since(restarted).Round(100*time.Millisecond))

	if !staysEng.Alive() {
		t.Error("the member engaged before the outage was disengaged")
	}
	if cl, err := p.Get(t.Context(), stays); err != nil || cl != staysEng.Cluster {
		t.Errorf("the member engaged before the outage is not the engaged instance: %v", err)
	}
}
