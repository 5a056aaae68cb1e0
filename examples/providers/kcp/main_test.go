package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"mcr.dev/core/envtest"
	"mcr.dev/examples/internal/exampletest"
)

var fleet *envtest.Fleet

func TestMain(m *testing.M) {
	exampletest.RunChild(run)
	os.Exit(exampletest.Main(m, &fleet, "plain"))
}

// kcp's APIExport virtual workspaces (the /clusters/* wildcard across logical clusters) have no
// stand-in on a plain kube-apiserver outside the provider's own tests, so the smoke test checks
// what an operator meets first: the flags, and that pointing the example at something that is
// not the workspace of an APIExport fails at startup with a message that says so, instead of
// running with an empty fleet. The provider's own tests cover engaging logical clusters.
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
