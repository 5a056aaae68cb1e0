// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package providertest_test

import (
	"testing"

	"k8s.io/client-go/rest"

	"mcr.dev/core/internal/credswap"
	"mcr.dev/core/providers/providertest"
)

func TestBearerTokenOf(t *testing.T) {
	plain := &rest.Config{Host: "https://member.invalid:6443", BearerToken: "first"}
	if got := providertest.BearerTokenOf(t, plain); got != "first" {
		t.Errorf("plain config: %q, want first", got)
	}
	if got := providertest.BearerTokenOf(t, &rest.Config{Host: "https://member.invalid:6443"}); got != "" {
		t.Errorf("no credentials: %q, want none", got)
	}
	// Credentials held by the transport, as after an in-place refresh.
	swappable, holder, err := credswap.Config(plain)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	next := rest.CopyConfig(plain)
	next.BearerToken = "second"
	if err := holder.Swap(next); err != nil {
		t.Fatal(err)
	}
	if got := providertest.BearerTokenOf(t, swappable); got != "second" {
		t.Errorf("swapped config: %q, want second", got)
	}
}
