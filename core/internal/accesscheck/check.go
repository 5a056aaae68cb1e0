// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package accesscheck

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authenticationv1client "k8s.io/client-go/kubernetes/typed/authentication/v1"
	"k8s.io/client-go/rest"

	"mcr.dev/core/redact"
)

// ErrUnauthorized is returned (wrapped) by Check and Served when the member refused the credentials.
var ErrUnauthorized = errors.New("the member refused the credentials (401 Unauthorized)")

// ErrUnreachable is returned (wrapped) by Check and Served when the member did not answer as an API
// server.
var ErrUnreachable = errors.New("the member did not answer")

// Check asks the member, through hc with cfg (a cluster's GetConfig and GetHTTPClient), who the credentials are, with a SelfSubjectReview: it proves
// that the member answers and accepts the credentials, and needs no RBAC beyond what every
// authenticated user has. A Forbidden or NotFound answer (reviews not allowed or not served)
// still proves both, unless the member took a config with credentials for an anonymous
// request (an API server that allows anonymous requests answers bad credentials so), which is
// ErrUnauthorized. The error wraps ErrUnauthorized or ErrUnreachable and never contains the
// member's address (a URL may carry secrets, and the error ends up in Events); what else it
// says is passed through redact.Text.
func Check(ctx context.Context, cfg *rest.Config, hc *http.Client) error {
	return checkAccess(ctx, cfg, hc, false)
}

// Served is Check for members behind a front door that routes by path: a NotFound
// answer means that nothing serves the member's path, and is ErrUnreachable.
func Served(ctx context.Context, cfg *rest.Config, hc *http.Client) error {
	return checkAccess(ctx, cfg, hc, true)
}

func checkAccess(ctx context.Context, cfg *rest.Config, hc *http.Client, notFoundIsUnreachable bool) error {
	c, err := authenticationv1client.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return redact.Error(fmt.Errorf("%w: creating a client: %w", ErrUnreachable, err))
	}
	review, err := c.SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	switch {
	case anonymous(review, err) && hasCredentials(cfg):
		// An API server that allows anonymous requests answers those whose credentials it
		// does not accept as anonymous, instead of with 401.
		return fmt.Errorf("%w: the member took them for an anonymous request", ErrUnauthorized)
	case apierrors.IsNotFound(err) && notFoundIsUnreachable:
		return fmt.Errorf("%w: %s", ErrUnreachable, describe(err))
	case err == nil, apierrors.IsForbidden(err), apierrors.IsNotFound(err):
		return nil
	case apierrors.IsUnauthorized(err):
		return ErrUnauthorized
	case ctx.Err() != nil:
		return fmt.Errorf("%w within the access check's time limit", ErrUnreachable)
	}
	return fmt.Errorf("%w: %s", ErrUnreachable, redact.Text(describe(err)))
}

// anonymousUser is the user an API server gives requests it does not authenticate.
const anonymousUser = "system:anonymous"

// anonymous reports whether the answer to a SelfSubjectReview shows an anonymous request: a
// review of the anonymous user, or a refusal to review that names it.
func anonymous(review *authenticationv1.SelfSubjectReview, err error) bool {
	if err == nil {
		return review != nil && review.Status.UserInfo.Username == anonymousUser
	}
	return apierrors.IsForbidden(err) && strings.Contains(err.Error(), `"`+anonymousUser+`"`)
}

// hasCredentials reports whether cfg authenticates at all (a config without credentials may
// well mean to be anonymous).
func hasCredentials(cfg *rest.Config) bool {
	return cfg.BearerToken != "" || cfg.BearerTokenFile != "" || cfg.Username != "" || cfg.Password != "" ||
		len(cfg.CertData) > 0 || cfg.CertFile != "" || cfg.ExecProvider != nil || cfg.AuthProvider != nil ||
		cfg.WrapTransport != nil || cfg.Transport != nil
}

// describe names what went wrong with a request without repeating the request's URL, which
// may carry credentials in its user info or query.
func describe(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		s := status.Status()
		return fmt.Sprintf("the answer was %d %s", s.Code, s.Reason)
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) && urlErr.Err != nil {
		return urlErr.Err.Error()
	}
	return err.Error()
}
