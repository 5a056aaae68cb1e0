// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package metrics

import (
	"maps"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// mcr_build_info is served by controller-runtime's registry with value 1, and names this test
// binary's Go version and its main module, mcr.dev/core, built from the work tree.
func TestBuildInfoIsRegistered(t *testing.T) {
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "mcr_build_info" {
			continue
		}
		if n := len(f.GetMetric()); n != 1 {
			t.Fatalf("mcr_build_info has %d series, want 1", n)
		}
		m := f.GetMetric()[0]
		if v := m.GetGauge().GetValue(); v != 1 {
			t.Errorf("mcr_build_info = %g, want 1", v)
		}
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		want := map[string]string{"go_version": runtime.Version(), "core_version": "(devel)"}
		for k, v := range want {
			if labels[k] != v {
				t.Errorf("label %s = %q, want %q (labels %v)", k, labels[k], v, labels)
			}
		}
		return
	}
	t.Fatal("mcr_build_info is not in controller-runtime's registry")
}

func TestBuildInfoLabels(t *testing.T) {
	bi := &debug.BuildInfo{
		GoVersion: "go1.99.1",
		Main:      debug.Module{Path: "example.com/my-controller", Version: "(devel)"},
		Deps: []*debug.Module{
			{Path: "mcr.dev/core", Version: "v0.4.0"},
			{Path: "mcr.dev/providers/kubeconfig", Version: "v0.4.0"},
			{Path: "mcr.dev/providers/cluster-profile", Version: "v0.4.1"},
			// A replace with a local directory: the code is whatever that directory held.
			{Path: "mcr.dev/conformance", Version: "v0.4.0", Replace: &debug.Module{Path: "../conformance"}},
			// A replace with another version reports the version built.
			{Path: "mcr.dev/providers/kcp", Version: "v0.4.0", Replace: &debug.Module{Path: "mcr.dev/providers/kcp", Version: "v0.4.2"}},
			{Path: "mcr.dev/examples", Version: "v0.4.0"},
			{Path: "sigs.k8s.io/controller-runtime", Version: "v0.25.2"},
		},
	}
	want := prometheus.Labels{
		"go_version":                       "go1.99.1",
		"core_version":                     "v0.4.0",
		"provider_kubeconfig_version":      "v0.4.0",
		"provider_cluster_profile_version": "v0.4.1",
		"conformance_version":              "(devel)",
		"provider_kcp_version":             "v0.4.2",
	}
	if got := buildInfoLabels(bi); !maps.Equal(got, want) {
		t.Errorf("buildInfoLabels = %v\nwant %v", got, want)
	}
	if got := buildInfoLabels(nil); !maps.Equal(got, prometheus.Labels{"go_version": runtime.Version()}) {
		t.Errorf("buildInfoLabels(nil) = %v, want the Go version only", got)
	}
}
