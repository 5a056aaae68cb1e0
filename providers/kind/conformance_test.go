// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kind_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"mcr.dev/conformance"
	"mcr.dev/conformance/mcrproviders"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/kind"
	"mcr.dev/providers/kind/internal/standin"
)

// TestConformance runs the mcr conformance suite against the provider through the real kind
// library: every member is a stand-in kind cluster named after the member, whose admin.conf
// carries the member's credentials (a ServiceAccount token) and whose published API server
// port is the member's apiserver. Rotating credentials is what `kind delete cluster` and `kind
// create cluster` under the same name amount to: the same name with a new kubeconfig. A
// no-op update adds or removes a worker node container, which changes what the engine lists
// but not the kubeconfig. The provider runs with RefreshCredentialsInPlace turned off, so this run
// covers a new engagement per rotation; TestConformanceInPlace covers the default.
func TestConformance(t *testing.T) { runConformance(t, false) }

// TestConformanceInPlace runs the suite's rotation tests with the provider's default options,
// which refresh credentials in place, claiming InPlaceCredentialRefresh: a kubeconfig with a new
// token for the same API server and CA keeps the engagement. (A real `kind create cluster` makes
// a new CA, which still engages a new cluster.)
func TestConformanceInPlace(t *testing.T) { runConformance(t, true) }

func runConformance(t *testing.T, inPlace bool) {
	kc := useStandIn(t)
	t.Setenv(standin.TraceEnv, "") // the suite makes thousands of calls; no need to keep them

	// The provider's log lines, which must never quote a member's credentials; it records no
	// Events (no host cluster).
	providerLogs := &providertest.LogBuffer{}
	// Every known cluster is synced again this often: short, for NoReengageOnResync.
	const resync = 2 * time.Second

	harness := &conformance.KubeconfigHarness{
		Fleet: conformance.NewFleet(fleet.Member("east"), fleet.Member("west"), fleet.Member("north")),
		Provider: func(context.Context) (multicluster.Provider, error) {
			// A poll every second keeps the suite quick without flooding the stand-in: each poll
			// runs about eight engine commands per cluster, and the Scale test has thirty.
			return kind.New(kind.Options{PollInterval: time.Second, Options: kit.Options{Logger: providerLogs.Logger(), ResyncPeriod: resync, RefreshCredentialsInPlace: ptr.To(inPlace)}}), nil
		},
		Write: func(_ context.Context, name string, kubeconfig []byte) error {
			return kc.Create(name, kubeconfig)
		},
		Delete: func(_ context.Context, name string) error {
			return kc.Delete(name)
		},
		ProviderReports: func(context.Context) ([]string, error) { return providerLogs.Lines(), nil },
		Update: func(_ context.Context, name string) error {
			return kc.Update(name, func(c *standin.Cluster) {
				worker := standin.Node{Name: name + "-worker", Role: standin.RoleWorker}
				if i := slices.IndexFunc(c.Nodes, func(n standin.Node) bool { return n.Name == worker.Name }); i >= 0 {
					c.Nodes = slices.Delete(c.Nodes, i, i+1)
				} else {
					c.Nodes = append(c.Nodes, worker)
				}
			})
		},
		Resync: resync,
	}

	// Not MemberReadiness: a kind cluster carries no readiness. Not SourceRestart: the source of
	// truth is the kind command line over the container engine (here the stand-in), not an
	// apiserver the test could take down.
	o := mcrproviders.Options("kind", conformance.MemberReadiness, conformance.SourceRestart)
	if inPlace {
		mcrproviders.RunInPlace(t, harness, o)
		return
	}
	conformance.Run(t, harness, o)
}
