// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package conformance_test

import (
	"context"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// TestFleetRotationKeepsIdentity: a rotation gives the member a new token of the same user, and
// revokeOld returns once the old token fails, while the new one goes on working. Providers that refresh
// credentials in place rely on both (InPlaceCredentialRefresh).
func TestFleetRotationKeepsIdentity(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	f := newFleet()
	m, err := f.Add(ctx, "rotating")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Remove(ctx, "rotating") }()
	whoAmI := func(cfg *rest.Config) (string, error) {
		review, err := kubernetes.NewForConfigOrDie(cfg).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			return "", err
		}
		return review.Status.UserInfo.Username, nil
	}
	first := m.Config()
	before, err := whoAmI(first)
	if err != nil {
		t.Fatal(err)
	}
	revokeOld, err := m.Rotate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	second := m.Config()
	if second.BearerToken == first.BearerToken {
		t.Fatal("the rotation kept the token")
	}
	if after, err := whoAmI(second); err != nil || after != before {
		t.Fatalf("after the rotation the member is %q (%v), want %q as before", after, err, before)
	}
	if _, err := whoAmI(first); err != nil {
		t.Fatalf("the old token stopped working before revokeOld: %v", err)
	}
	revokeCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := revokeOld(revokeCtx); err != nil {
		t.Fatal(err)
	}
	// revokeOld returned: the apiserver refuses the old token from now on.
	if _, err := whoAmI(first); !apierrors.IsUnauthorized(err) {
		t.Fatalf("after revokeOld the old token gets %v, want Unauthorized", err)
	}
	if after, err := whoAmI(second); err != nil || after != before {
		t.Fatalf("after revoking the old token the new one authenticates as %q (%v), want %q", after, err, before)
	}
}
