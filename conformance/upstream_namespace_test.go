//go:build upstream_cr025

// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// This test needs a sigs.k8s.io/multicluster-runtime whose providers/namespace compiles against
// controller-runtime v0.25; v0.24.1 does not (see upstream_skip_test.go). Bump the version in
// go.mod, run it with -tags upstream_cr025, then drop the tag and the skip.

package conformance_test

import (
	"slices"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/cluster"
	upstreamnamespace "sigs.k8s.io/multicluster-runtime/providers/namespace"

	"mcr.dev/conformance"
	"mcr.dev/conformance/internal/namespaceharness"
	"mcr.dev/core/multicluster"
)

// upstreamNamespaceMembers are the apiservers the test adds to the fleet: the namespace host.
var upstreamNamespaceMembers = []string{"ns-host"}

// upstreamNamespaceFeatures are the features the run checks: Scale, which the provider has,
// and EngageErrorRecovery, which it lacks; it is checked to document that finding.
var upstreamNamespaceFeatures = []conformance.Feature{conformance.Scale, conformance.EngageErrorRecovery}

// upstreamNamespaceFails pins the tests that multicluster-runtime v0.24.1's namespace provider
// fails, each because of a bug in that provider (docs/conformance.md describes them). The tests
// stay strict; this list changes only when the pinned version does.
var upstreamNamespaceFails = []string{
	// After a failed Engage the provider neither retries (only a new Add event of the namespace
	// would) nor cancels the context it passed to the failed Engage.
	conformance.RetryAfterEngageError,
}

// TestMulticlusterRuntimeNamespaceProvider is the third-party check: the suite against
// sigs.k8s.io/multicluster-runtime/providers/namespace at the version in go.mod.
func TestMulticlusterRuntimeNamespaceProvider(t *testing.T) {
	h, err := namespaceharness.New(fleet.Member("ns-host").Config(), func(host cluster.Cluster) multicluster.Provider {
		return upstreamnamespace.New(host)
	})
	if err != nil {
		t.Fatal(err)
	}
	o := conformance.Options{
		Features:       upstreamNamespaceFeatures,
		Timeouts:       selfTestOptions(conformance.ModeDirect, true).Timeouts,
		ScaleMembers:   24,
		Implementation: conformance.Implementation{Organization: "kubernetes-sigs", Project: "multicluster-runtime providers/namespace", Version: "v0.24.1"},
	}
	results, rep, err := conformance.RunTests(t.Context(), h, o, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + rep.Markdown())
	for _, r := range results {
		want := conformance.Passed
		if slices.Contains(upstreamNamespaceFails, r.ID) {
			want = conformance.Failed
		}
		if r.Feature != conformance.Core && !slices.Contains(upstreamNamespaceFeatures, r.Feature) {
			want = conformance.NotSupported
		}
		if r.Result != want {
			t.Errorf("%s: %s, want %s: %s", r.ID, r.Result, want, r.Message)
		}
	}
}
