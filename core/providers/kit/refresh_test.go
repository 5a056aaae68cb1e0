// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kit_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/envtest"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
)

// TestEngineRefreshesCredentialsInPlace rotates a member's ServiceAccount token with
// Options.RefreshCredentialsInPlace: the engaged cluster stays (no new engagement), revoking
// the old token right after the rotation costs nothing (live reads and the cache's watches go
// on), a new token the member refuses is reported while the working one stays, and a token of
// another ServiceAccount still engages a new cluster.
func TestEngineRefreshesCredentialsInPlace(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	member := envtest.StartForTest(t, "east").Member("east")
	admin := kubernetes.NewForConfigOrDie(member.Config())

	// Tokens bound to Secrets of their own, so that each can be revoked alone by deleting it.
	base := serviceAccountConfig(ctx, t, member, "refresher")
	token := func(sa, secret string) *rest.Config {
		t.Helper()
		s, err := admin.CoreV1().Secrets("mcr-system").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secret}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		tr, err := admin.CoreV1().ServiceAccounts("mcr-system").CreateToken(ctx, sa, &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
			BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Secret", APIVersion: "v1", Name: s.Name, UID: s.UID},
		}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cfg := rest.CopyConfig(base)
		cfg.BearerToken = tr.Status.Token
		return cfg
	}
	first, second := token("refresher", "token-1"), token("refresher", "token-2")

	p := newMemberProvider(t, kit.Options{RefreshCredentialsInPlace: ptr.To(true)})
	run := providertest.Start(t, p, time.Minute)
	p.set("east", first)
	engaged := run.Recorder.WaitEngaged(t, p, "east", time.Minute)
	ns := envtest.NamespaceForTest(t, "refresh", member)
	if err := engaged.Cluster.GetClient().List(ctx, &corev1.ConfigMapList{}, client.InNamespace(ns)); err != nil {
		t.Fatal(err) // starts the ConfigMap informer before the rotation
	}

	p.set("east", second)
	providertest.Eventually(t, time.Minute, "the credentials replaced in place", func() error {
		for _, e := range p.events.all() {
			if strings.Contains(e, kit.ReasonCredentialsRotated) && strings.Contains(e, "in place") {
				return nil
			}
		}
		return fmt.Errorf("Events so far: %v", p.events.all())
	})
	if n := run.Recorder.Count("east"); n != 1 || !engaged.Alive() {
		t.Fatalf("after an in-place refresh: %d engagements, first alive %v; want 1 and alive", n, engaged.Alive())
	}

	// Revoke the first token at once, and wait until the member refuses it.
	if err := admin.CoreV1().Secrets("mcr-system").Delete(ctx, "token-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	revoked := kubernetes.NewForConfigOrDie(first)
	providertest.Eventually(t, time.Minute, "the first token refused", func() error {
		if _, err := revoked.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{}); err == nil {
			return fmt.Errorf("still accepted")
		}
		return nil
	})
	if err := engaged.Cluster.GetAPIReader().List(ctx, &corev1.ConfigMapList{}, client.InNamespace(ns)); err != nil {
		t.Fatalf("a live read after the old token was revoked: %v", err)
	}
	if _, err := admin.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after-revoke"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	providertest.Eventually(t, time.Minute, "the cache sees a ConfigMap created after the revocation", func() error {
		return engaged.Cluster.GetClient().Get(ctx, client.ObjectKey{Namespace: ns, Name: "after-revoke"}, &corev1.ConfigMap{})
	})

	// A token the member refuses: reported, and the working one stays.
	bad := rest.CopyConfig(second)
	bad.BearerToken = "not-a-token-the-member-knows"
	p.set("east", bad)
	waitReason(t, p.events, "east", kit.ReasonUnauthorized)
	if err := engaged.Cluster.GetAPIReader().List(ctx, &corev1.ConfigMapList{}, client.InNamespace(ns)); err != nil {
		t.Fatalf("a live read after refused new credentials: %v", err)
	}
	if n := run.Recorder.Count("east"); n != 1 || !engaged.Alive() {
		t.Fatalf("after refused credentials: %d engagements, first alive %v; want 1 and alive", n, engaged.Alive())
	}

	// Another user is not a refresh: a new cluster is engaged.
	serviceAccountConfig(ctx, t, member, "someone-else")
	p.set("east", token("someone-else", "token-3"))
	run.Recorder.WaitReengaged(t, p, "east", engaged, time.Minute)
}

// serviceAccountConfig creates the ServiceAccount name in mcr-system with the envtest
// package's default read-only rules and returns a config with a token for it.
func serviceAccountConfig(ctx context.Context, t *testing.T, member *envtest.Member, name string) *rest.Config {
	t.Helper()
	kc, err := member.ServiceAccountKubeconfig(ctx, envtest.ServiceAccountOptions{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kc)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
