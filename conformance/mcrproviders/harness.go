// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package mcrproviders

import (
	"context"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/conformance"
	"mcr.dev/core/envtest"
)

// Resync is the ResyncPeriod of a provider under the suite: short, for NoReengageOnResync.
const Resync = 2 * time.Second

// LinkHost starts a forwarder to host until the test ends and returns a copy of host's config
// that reaches it through the forwarder. Outage takes the forwarder down and up again: to the
// provider, host's apiserver restarts, while the shared apiserver keeps serving the package's
// other tests.
func LinkHost(t testing.TB, host *envtest.Member) (*rest.Config, *envtest.Forwarder) {
	t.Helper()
	link := envtest.StartForwarderForTest(t, host)
	cfg := rest.CopyConfig(host.Config())
	cfg.Host = link.URL()
	return cfg, link
}

// Outage is a KubeconfigHarness.SourceOutage for a provider that reaches its source through
// link: link goes down, and the returned restart brings it up again.
func Outage(link *envtest.Forwarder) func(context.Context) (func(context.Context) error, error) {
	return func(context.Context) (func(context.Context) error, error) {
		link.Down()
		return func(context.Context) error { return link.Up() }, nil
	}
}

// Reports is a KubeconfigHarness.ProviderReports: the provider's log lines, and the texts of the
// Events in namespace of the apiserver events reads ("" for every namespace).
func Reports(logLines func() []string, events client.Client, namespace string) func(context.Context) ([]string, error) {
	return func(ctx context.Context) ([]string, error) {
		texts, err := conformance.EventTexts(ctx, events, namespace)
		return append(logLines(), texts...), err
	}
}
