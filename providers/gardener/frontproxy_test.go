// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package gardener_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"sigs.k8s.io/controller-runtime/pkg/client"

	authenticationv1alpha1 "github.com/gardener/gardener/pkg/apis/authentication/v1alpha1"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"

	"mcr.dev/core/envtest"
	"mcr.dev/core/kubeconfig"
)

// TestFrontProxyServesAdminKubeconfig checks the test front-proxy against the behavior of
// gardener-apiserver's adminkubeconfig subresource: defaulting, capping, validation, NotFound,
// delegated authentication and authorization, and that everything else reaches the garden.
// The real subresource is exercised in package realgarden; the stand-in remains for what one
// real garden cannot show (see the package comment in main_test.go).
func TestFrontProxyServesAdminKubeconfig(t *testing.T) {
	ns := newNamespace(t, "garden-proxy")
	proxy := startProxy(t, 20*time.Minute)
	usableShoot(t, ns, "proxied", "east")
	newShoot(t, ns, "no-address", nil)

	unprivilegedKubeconfig, err := fleet.Member("host").ServiceAccountKubeconfig(t.Context(), envtest.ServiceAccountOptions{
		Name:         "shoot-reader",
		ClusterRules: []rbacv1.PolicyRule{{APIGroups: []string{"core.gardener.cloud"}, Resources: []string{"shoots"}, Verbs: []string{"get"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	unprivileged, err := clientcmd.RESTConfigFromKubeConfig(unprivilegedKubeconfig)
	if err != nil {
		t.Fatal(err)
	}

	path := func(shoot string) string {
		return fmt.Sprintf("/apis/core.gardener.cloud/v1beta1/namespaces/%s/shoots/%s/adminkubeconfig", ns, shoot)
	}
	do := func(identity *rest.Config, method, path, contentType, body string) (int, []byte) {
		t.Helper()
		hc, err := rest.HTTPClientFor(proxy.ConfigFor(identity))
		if err != nil {
			t.Fatal(err)
		}
		req, err := http.NewRequestWithContext(t.Context(), method, proxy.URL()+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, data
	}
	request := func(seconds int64) string {
		return fmt.Sprintf(`{"apiVersion":"authentication.gardener.cloud/v1alpha1","kind":"AdminKubeconfigRequest","spec":{"expirationSeconds":%d}}`, seconds)
	}

	// Issued, capped to MaxExpiration and reported back, usable under the hardened policy.
	code, body := do(gardenIdentity, http.MethodPost, path("proxied"), "application/json", request(3600))
	if code != http.StatusCreated {
		t.Fatalf("POST adminkubeconfig: %d %s", code, body)
	}
	var got authenticationv1alpha1.AdminKubeconfigRequest
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if got.Kind != "AdminKubeconfigRequest" || got.APIVersion != "authentication.gardener.cloud/v1alpha1" {
		t.Errorf("answer is a %s %s", got.APIVersion, got.Kind)
	}
	if got.Spec.ExpirationSeconds == nil || *got.Spec.ExpirationSeconds != 1200 {
		t.Errorf("spec.expirationSeconds = %v, want the cap 1200", got.Spec.ExpirationSeconds)
	}
	if left := time.Until(got.Status.ExpirationTimestamp.Time); left < 15*time.Minute || left > 21*time.Minute {
		t.Errorf("status.expirationTimestamp is %s away, want about 20 minutes", left)
	}
	cfg, err := kubeconfig.Load(got.Status.Kubeconfig, kubeconfig.Policy{})
	if err != nil {
		t.Fatalf("the issued kubeconfig: %v", err)
	}
	cs, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.List(t.Context(), &corev1.NamespaceList{}); err != nil {
		t.Errorf("the issued kubeconfig does not give admin access to east: %v", err)
	}
	if cfg.Host != fleet.Member("east").Host() {
		t.Errorf("the issued kubeconfig points at %s, want east %s", cfg.Host, fleet.Member("east").Host())
	}

	// Gardener's answers to what it refuses.
	for _, tc := range []struct {
		name                     string
		identity                 *rest.Config
		method, path, ctype, req string
		code                     int
		reason                   metav1.StatusReason
		message                  string
	}{
		{"too short", gardenIdentity, http.MethodPost, path("proxied"), "application/json", request(599),
			http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, "may not specify a duration less than 10 minutes"},
		{"unknown shoot", gardenIdentity, http.MethodPost, path("missing"), "application/json", request(600),
			http.StatusNotFound, metav1.StatusReasonNotFound, `shoots.core.gardener.cloud "missing" not found`},
		{"no advertised address", gardenIdentity, http.MethodPost, path("no-address"), "application/json", request(600),
			http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, "no suitable advertised address"},
		{"not a POST", gardenIdentity, http.MethodGet, path("proxied"), "", "",
			http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed, "not supported"},
		{"anonymous", &rest.Config{}, http.MethodPost, path("proxied"), "application/json", request(600),
			http.StatusUnauthorized, metav1.StatusReasonUnauthorized, "Unauthorized"},
		{"not allowed", unprivileged, http.MethodPost, path("proxied"), "application/json", request(600),
			http.StatusForbidden, metav1.StatusReasonForbidden, `cannot create resource "shoots/adminkubeconfig"`},
		{"yaml body", gardenIdentity, http.MethodPost, path("proxied"), "application/yaml", "spec: {}",
			http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType, "application/json only"},
		{"wrong kind", gardenIdentity, http.MethodPost, path("proxied"), "application/json", `{"apiVersion":"v1","kind":"Pod"}`,
			http.StatusBadRequest, metav1.StatusReasonBadRequest, "not an AdminKubeconfigRequest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := do(tc.identity, tc.method, tc.path, tc.ctype, tc.req)
			var st metav1.Status
			if err := json.Unmarshal(body, &st); err != nil {
				t.Fatalf("%d %s: not a Status: %v", code, body, err)
			}
			if code != tc.code || st.Code != int32(tc.code) || st.Reason != tc.reason || !strings.Contains(st.Message, tc.message) {
				t.Errorf("got %d %s %q, want %d %s containing %q", code, st.Reason, st.Message, tc.code, tc.reason, tc.message)
			}
		})
	}

	// Everything else is the garden's, with the caller's identity.
	// (A list: the provider's identity may list Shoots, not get them.)
	code, body = do(gardenIdentity, http.MethodGet, fmt.Sprintf("/apis/core.gardener.cloud/v1beta1/namespaces/%s/shoots", ns), "", "")
	var shoots gardencorev1beta1.ShootList
	err = json.Unmarshal(body, &shoots)
	if code != http.StatusOK || err != nil || !slices.ContainsFunc(shoots.Items, func(s gardencorev1beta1.Shoot) bool { return s.Name == "proxied" }) {
		t.Errorf("LIST shoots through the proxy: %d %.200s", code, body)
	}
	code, body = do(unprivileged, http.MethodGet, "/api/v1/namespaces/"+ns+"/secrets", "", "")
	if code != http.StatusForbidden || !bytes.Contains(body, []byte("shoot-reader")) {
		t.Errorf("the proxy does not pass the caller's identity on: %d %.200s", code, body)
	}
}
