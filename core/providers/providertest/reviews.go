// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package providertest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// The front proxies of providers' tests (the stand-ins of a Gardener, kcp or Milo front door)
// act for their callers as the real ones do: they ask an apiserver who a bearer token belongs to
// and whether that user may make the request.

// ReviewToken asks cs, with a TokenReview, who token belongs to; authenticated is false when the
// apiserver does not accept the token.
func ReviewToken(ctx context.Context, cs kubernetes.Interface, token string) (user authenticationv1.UserInfo, authenticated bool, err error) {
	review, err := cs.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: token},
	}, metav1.CreateOptions{})
	if err != nil {
		return authenticationv1.UserInfo{}, false, err
	}
	return review.Status.User, review.Status.Authenticated, nil
}

// ReviewAccess asks cs, with a SubjectAccessReview, whether user may do what attrs describe.
func ReviewAccess(ctx context.Context, cs kubernetes.Interface, user authenticationv1.UserInfo, attrs authorizationv1.ResourceAttributes) (bool, error) {
	extra := map[string]authorizationv1.ExtraValue{}
	for k, v := range user.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	review, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{
			User: user.Username, Groups: user.Groups, UID: user.UID, Extra: extra,
			ResourceAttributes: &attrs,
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	return review.Status.Allowed, nil
}

// UserOf returns the user that requests with cfg authenticate as, from a SelfSubjectReview. It
// is how a test tells which credentials an engaged cluster uses: credentials refreshed in place
// (kit.Options.RefreshCredentialsInPlace) live in the cluster's transport, not in the fields of
// its config.
func UserOf(ctx context.Context, cfg *rest.Config) (string, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("asking %s who the credentials belong to: %w", cfg.Host, err)
	}
	return review.Status.UserInfo.Username, nil
}

// BearerTokenOf returns the bearer token that requests sent with cfg carry, "" for none: one
// request goes through cfg's transport to a local plain-HTTP server, which records its
// Authorization header and answers nothing else. Unlike UserOf it needs no apiserver and tells
// two tokens of the same user apart; credentials refreshed in place are read where they live,
// in the transport.
func BearerTokenOf(t testing.TB, cfg *rest.Config) string {
	t.Helper()
	headers := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case headers <- r.Header.Get("Authorization"):
		default:
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatalf("a client for the config: %v", err)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := hc.Do(req)
	if err != nil {
		t.Fatalf("a request through the config's transport: %v", err)
	}
	_ = res.Body.Close()
	return strings.TrimPrefix(<-headers, "Bearer ")
}
