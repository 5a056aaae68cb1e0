//go:build upstream_cr025

// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// This test needs a github.com/kcp-dev/multicluster-provider whose apiexport package compiles
// against controller-runtime v0.25; v0.8.0 does not (see kcpdev_skip_test.go). Bump the version
// in go.mod, run it with -tags upstream_cr025, then drop the tag and the skip.

package realkcp_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"

	"github.com/kcp-dev/multicluster-provider/apiexport"

	"mcr.dev/conformance"
	"mcr.dev/core/multicluster"
	"mcr.dev/providers/kcp/kcptest"
)

// TestKCPDevProviderConformance runs the core tests against kcp-dev's own apiexport provider
// (github.com/kcp-dev/multicluster-provider, the version in go.mod) under mcr's manager, on
// the same real kcp and harness as mcr's provider: the third-party check of the suite, and of
// mcr's manager running a provider written for multicluster-runtime.
func TestKCPDevProviderConformance(t *testing.T) {
	h := newHarness(t, func(config *rest.Config) (multicluster.Provider, error) {
		scheme := runtime.NewScheme()
		if err := clientgoscheme.AddToScheme(scheme); err != nil {
			return nil, err
		}
		if err := apisv1alpha1.AddToScheme(scheme); err != nil {
			return nil, err
		}
		log := testLogs(t).Logger()
		return apiexport.New(config, exportName, apiexport.Options{Scheme: scheme, Log: &log})
	})
	assess(t, h, conformance.Options{
		Mode:          conformance.ModeManager,
		ManagerConfig: server.WorkspaceConfig(h.provider.Path),
		Implementation: conformance.Implementation{
			Organization: "kcp-dev",
			Project:      "github.com/kcp-dev/multicluster-provider apiexport",
			Version:      kcpDevProviderVersion + " on kcp " + kcptest.Version,
		},
	}, kcpDevProviderFails)
}

// kcpDevProviderVersion is the version of github.com/kcp-dev/multicluster-provider in go.mod.
const kcpDevProviderVersion = "v0.8.0"

// kcpDevProviderFails pins the core tests that kcp-dev's provider fails, with the reason; the
// tests stay strict, and this list changes only when the pinned version does.
var kcpDevProviderFails = map[string]string{}
