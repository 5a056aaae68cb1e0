// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kcp-dev/logicalcluster/v3"
	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"

	"mcr.dev/core/envtest"
	"mcr.dev/examples/internal/exampletest"
	"mcr.dev/providers/kcp/kcptest"
)

var fleet *envtest.Fleet

func TestMain(m *testing.M) {
	exampletest.RunChild(run)
	os.Exit(exampletest.Main(m, &fleet, "plain"))
}

// What an operator meets first: the flags, and that pointing the example at something that is
// not the workspace of an APIExport (a plain kube-apiserver) fails at startup with a message
// that says so, instead of running with an empty fleet.
func TestKCPProviderExampleNeedsAnAPIExportWorkspace(t *testing.T) {
	kubeconfig := exampletest.WriteKubeconfig(t, t.TempDir(), "plain.kubeconfig", fleet.Member("plain"))
	common := []string{"-kubeconfig", kubeconfig, "-metrics-bind-address", "0", "-health-probe-bind-address", "0", "-zap-log-level", "error"}

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no endpoint slice", nil, "-endpoint-slice is required"},
		{"unknown watch", []string{"-endpoint-slice", "widgets", "-watch", "secrets"}, `unknown -watch "secrets"`},
		{"not a kcp workspace", []string{"-endpoint-slice", "widgets", "-cache-sync-timeout", "20s"}, "is apis.kcp.io served where the config points"},
		{"not a kcp workspace, logical clusters", []string{"-endpoint-slice", "widgets", "-watch", "logicalclusters", "-cache-sync-timeout", "20s"}, "APIExportEndpointSlice widgets"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A process per case: the marker controller's name may be registered once per process.
			p := exampletest.StartChild(t, append(append([]string{}, common...), tc.args...)...)
			err := p.Wait(t, time.Minute)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("run returned %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// configMapsClaim is the APIExport's claim on ConfigMaps: the marker reaches a consumer's
// ConfigMaps through the virtual workspace only when the export claims them and the consumer's
// binding accepts the claim.
var configMapsClaim = apisv1alpha1.PermissionClaim{
	GroupResource: apisv1alpha1.GroupResource{Group: "", Resource: "configmaps"},
	All:           true,
}

// The example against a real kcp: the APIExport "widgets" in a provider workspace claims
// ConfigMaps, consumer workspaces bind it accepting the claim, and the marker controller
// annotates each consumer's labeled ConfigMap with the consumer's logical cluster name, for a
// consumer bound before the example starts and for one bound while it runs.
func TestKCPProviderExampleMarksConfigMapsOfBoundWorkspaces(t *testing.T) {
	// kcptest fails the test, saying to run "make kcp", when the kcp binary is missing.
	kcpServer := kcptest.StartForTest(t, kcptest.Options{})
	ctx := t.Context()
	root := logicalcluster.NewPath("root")

	provider, err := kcpServer.CreateWorkspace(ctx, root, "widgets-provider")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kcpServer.CreateExport(ctx, provider.Path, "widgets", nil, configMapsClaim); err != nil {
		t.Fatal(err)
	}
	// bind creates a consumer workspace that binds the export, and a labeled ConfigMap in it.
	bind := func(name string) (kcptest.Workspace, client.Client) {
		t.Helper()
		ws, err := kcpServer.CreateWorkspace(ctx, root, name)
		if err != nil {
			t.Fatal(err)
		}
		accepted := apisv1alpha1.AcceptablePermissionClaim{PermissionClaim: configMapsClaim, State: apisv1alpha1.ClaimAccepted}
		if _, err := kcpServer.Bind(ctx, ws.Path, "widgets", provider.Path, "widgets", accepted); err != nil {
			t.Fatal(err)
		}
		c, err := kcpServer.Client(ws.Path)
		if err != nil {
			t.Fatal(err)
		}
		exampletest.SeedMarked(t, c, "demo", "greeting")
		return ws, c
	}

	first, firstClient := bind("consumer-first")
	p := exampletest.StartChild(t, "-kubeconfig", kcpServer.WorkspaceKubeconfigFileForTest(t, provider.Path), "-endpoint-slice", "widgets",
		"-metrics-bind-address", "0", "-health-probe-bind-address", "0", "-zap-log-level", "error")
	p.Eventually(t, "the first consumer's ConfigMap marked", exampletest.MarkedBy(firstClient, "demo", "greeting", first.Cluster.String()))

	// A workspace that binds while the example runs joins the fleet.
	late, lateClient := bind("consumer-late")
	p.Eventually(t, "the late consumer's ConfigMap marked", exampletest.MarkedBy(lateClient, "demo", "greeting", late.Cluster.String()))
	p.Stop(t)
}
