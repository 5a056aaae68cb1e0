// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package credswap_test

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"mcr.dev/core/envtest"
	"mcr.dev/core/internal/credswap"
)

// TestSwapOnRealAPIServer swaps the credentials of one running client between two
// ServiceAccount tokens, a token file and a client certificate, and checks who the member
// sees after each swap, that a watch opened before a token swap outlives the revocation of the
// old token, and that a certificate swap closes the connections the old certificate opened.
func TestSwapOnRealAPIServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	member := envtest.StartForTest(t, "member").Member("member")
	admin := kubernetes.NewForConfigOrDie(member.Config())

	tokenConfig := func(name string) *rest.Config {
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
	alpha, beta := tokenConfig("alpha"), tokenConfig("beta")
	if credswap.SameIdentity(alpha, beta) || credswap.SameIdentity(alpha, member.Config()) || !credswap.SameIdentity(member.Config(), member.Config()) {
		t.Error("SameIdentity cannot tell the member's ServiceAccount tokens and admin certificate apart")
	}

	cfg, holder, err := credswap.Config(alpha)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	cs := kubernetes.NewForConfigOrDie(cfg)
	whoAmI := func() string {
		t.Helper()
		r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("self subject review: %v", err)
		}
		return r.Status.UserInfo.Username
	}
	if got, want := whoAmI(), "system:serviceaccount:mcr-system:alpha"; got != want {
		t.Fatalf("before any swap the member sees %q, want %q", got, want)
	}

	ns := envtest.NamespaceForTest(t, "swap", member)
	w, err := cs.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	if err := holder.Swap(beta); err != nil {
		t.Fatal(err)
	}
	if got, want := whoAmI(), "system:serviceaccount:mcr-system:beta"; got != want {
		t.Fatalf("after swapping to beta the member sees %q, want %q", got, want)
	}
	// Revoke alpha's token: deleting its ServiceAccount invalidates every token bound to it.
	if err := admin.CoreV1().ServiceAccounts("mcr-system").Delete(ctx, "alpha", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The apiserver finds the ServiceAccount gone through its informer: wait until it does.
	oldClient := kubernetes.NewForConfigOrDie(alpha)
	for _, err := oldClient.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{}); err == nil; _, err = oldClient.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{}) {
		select {
		case <-ctx.Done():
			t.Fatal("alpha's token still works after its ServiceAccount was deleted: the test cannot show anything")
		case <-time.After(200 * time.Millisecond):
		}
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatalf("list after revoking the old token: %v", err)
	}
	// The watch authenticated with alpha's token goes on: the apiserver checks a request once.
	if _, err := admin.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after-revoke"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, w); ev.Type != watch.Added || ev.Object.(*corev1.ConfigMap).Name != "after-revoke" {
		t.Fatalf("watch opened before the swap: got %v %T, want ADDED after-revoke", ev.Type, ev.Object)
	}

	// A token file, read at each request through client-go's cached file token source.
	gamma := tokenConfig("gamma")
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(gamma.BearerToken), 0o600); err != nil {
		t.Fatal(err)
	}
	gamma.BearerToken, gamma.BearerTokenFile = "", tokenFile
	if err := holder.Swap(gamma); err != nil {
		t.Fatal(err)
	}
	if got, want := whoAmI(), "system:serviceaccount:mcr-system:gamma"; got != want {
		t.Fatalf("after swapping to a token file the member sees %q, want %q", got, want)
	}

	// A client certificate cannot join a connection pool shared with other token clients: the
	// swap is refused, and the token stays.
	if err := holder.Swap(member.Config()); !errors.Is(err, credswap.ErrNotSwappable) {
		t.Fatalf("swapping a token holder to a client certificate: %v, want ErrNotSwappable", err)
	}
	if got, want := whoAmI(), "system:serviceaccount:mcr-system:gamma"; got != want {
		t.Fatalf("after the refused swap the member sees %q, want %q", got, want)
	}

	// A holder that starts with the admin client certificate has connections of its own. Its
	// swap to a token closes them, since TLS authenticated them with the certificate, and a
	// watch on one of them ends.
	certCfg, certHolder, err := credswap.Config(member.Config())
	if err != nil {
		t.Fatal(err)
	}
	defer certHolder.Close()
	certClient := kubernetes.NewForConfigOrDie(certCfg)
	cw, err := certClient.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer cw.Stop()
	delta := tokenConfig("delta")
	if err := certHolder.Swap(delta); err != nil {
		t.Fatal(err)
	}
	if r, err := certClient.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{}); err != nil || r.Status.UserInfo.Username != "system:serviceaccount:mcr-system:delta" {
		t.Fatalf("after swapping the certificate to a token: %v, %v", r, err)
	}
	select {
	case _, open := <-cw.ResultChan():
		if open {
			// Drain what was already sent; the channel must close.
			for range cw.ResultChan() {
			}
		}
	case <-ctx.Done():
		t.Fatal("the watch opened before the certificate swap did not end")
	}
}

// TestTokenHoldersShareConnections: members of one endpoint that authenticate with tokens send
// their requests over client-go's one pool for the endpoint, as clients built from their
// configs would; a member with a client certificate has a pool of its own.
func TestTokenHoldersShareConnections(t *testing.T) {
	poolOf := func(c *rest.Config) http.RoundTripper {
		t.Helper()
		out, holder, err := credswap.Config(c)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(holder.Close)
		return out.Transport.(utilnet.RoundTripperWrapper).WrappedRoundTripper()
	}
	insecure := rest.TLSClientConfig{Insecure: true}
	a := poolOf(&rest.Config{Host: "https://127.0.0.1:6443", BearerToken: "a", TLSClientConfig: insecure})
	b := poolOf(&rest.Config{Host: "https://127.0.0.1:6443", BearerToken: "b", TLSClientConfig: insecure})
	basic := poolOf(&rest.Config{Host: "https://127.0.0.1:6443", Username: "u", Password: "p", TLSClientConfig: insecure})
	if a != b || a != basic {
		t.Error("token and basic-auth members of one endpoint do not share a connection pool")
	}
	other := poolOf(&rest.Config{Host: "https://127.0.0.1:6443", BearerToken: "a", TLSClientConfig: rest.TLSClientConfig{Insecure: true, ServerName: "other"}})
	if other == a {
		t.Error("members with other TLS settings share a connection pool")
	}
	cert, key, err := envtest.SelfSignedClientCertificate("member")
	if err != nil {
		t.Fatal(err)
	}
	withCert := poolOf(&rest.Config{Host: "https://127.0.0.1:6443", TLSClientConfig: rest.TLSClientConfig{Insecure: true, CertData: cert, KeyData: key}})
	if withCert == a {
		t.Error("a member with a client certificate shares the token members' connection pool")
	}
}

// TestSwapRefusesAnotherEndpoint: a config for another server, CA or impersonated user, or one
// whose credentials come from a plugin, is refused and the credentials stay as they were.
func TestSwapRefusesAnotherEndpoint(t *testing.T) {
	base := &rest.Config{Host: "https://127.0.0.1:6443", BearerToken: "first", TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	_, holder, err := credswap.Config(base)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	changed := map[string]func(*rest.Config){
		"host":        func(c *rest.Config) { c.Host = "https://127.0.0.1:7443" },
		"ca":          func(c *rest.Config) { c.Insecure, c.CAData = false, []byte("a CA") },
		"server name": func(c *rest.Config) { c.ServerName = "other" },
		"secure":      func(c *rest.Config) { c.Insecure = false },
		"impersonate": func(c *rest.Config) { c.Impersonate.UserName = "someone" },
	}
	for name, change := range changed {
		c := rest.CopyConfig(base)
		c.BearerToken = "second"
		change(c)
		if credswap.SameEndpoint(base, c) {
			t.Errorf("%s: SameEndpoint is true", name)
		}
		if err := holder.Swap(c); !errors.Is(err, credswap.ErrEndpointChanged) {
			t.Errorf("%s: Swap returned %v, want ErrEndpointChanged", name, err)
		}
	}
	c := rest.CopyConfig(base)
	c.BearerToken = ""
	c.ExecProvider = &clientcmdapi.ExecConfig{Command: "plugin", APIVersion: "client.authentication.k8s.io/v1"}
	if err := holder.Swap(c); !errors.Is(err, credswap.ErrNotSwappable) {
		t.Errorf("exec plugin: Swap returned %v, want ErrNotSwappable", err)
	}
	if _, _, err := credswap.Config(c); !errors.Is(err, credswap.ErrNotSwappable) {
		t.Errorf("exec plugin: Config returned %v, want ErrNotSwappable", err)
	}
	c = rest.CopyConfig(base)
	c.BearerToken, c.CertData = "", []byte("certificate without a key")
	if err := holder.Swap(c); err == nil {
		t.Error("a certificate without a key was swapped in")
	}
	c = rest.CopyConfig(base)
	c.BearerToken = "second"
	if !credswap.SameEndpoint(base, c) {
		t.Error("a token change alone is not SameEndpoint")
	}
	if err := holder.Swap(c); err != nil {
		t.Errorf("a token change alone: %v", err)
	}
}

func next(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("the watch ended")
		}
		return ev
	case <-time.After(time.Minute):
		t.Fatal("no watch event within a minute")
	}
	return watch.Event{}
}

func TestSameIdentity(t *testing.T) {
	jwt := func(sub string) string {
		enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
		return enc(`{"alg":"none"}`) + "." + enc(`{"sub":"`+sub+`","exp":1}`) + "." + enc("signature")
	}
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(jwt("system:serviceaccount:a:b")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		a, b *rest.Config
		same bool
	}{
		{"same service account, new token", &rest.Config{BearerToken: jwt("system:serviceaccount:a:b")}, &rest.Config{BearerToken: jwt("system:serviceaccount:a:b") + "x"}, true},
		{"token file of the same account", &rest.Config{BearerToken: jwt("system:serviceaccount:a:b")}, &rest.Config{BearerTokenFile: tokenFile}, true},
		{"other service account", &rest.Config{BearerToken: jwt("system:serviceaccount:a:b")}, &rest.Config{BearerToken: jwt("system:serviceaccount:a:c")}, false},
		{"opaque tokens", &rest.Config{BearerToken: "opaque-1"}, &rest.Config{BearerToken: "opaque-2"}, true},
		{"basic auth, same user", &rest.Config{Username: "u", Password: "1"}, &rest.Config{Username: "u", Password: "2"}, true},
		{"basic auth, other user", &rest.Config{Username: "u", Password: "1"}, &rest.Config{Username: "v", Password: "1"}, false},
		{"token, then basic auth", &rest.Config{BearerToken: jwt("x")}, &rest.Config{Username: "x"}, false},
	} {
		if got := credswap.SameIdentity(tc.a, tc.b); got != tc.same {
			t.Errorf("%s: SameIdentity = %v, want %v", tc.name, got, tc.same)
		}
	}
}
