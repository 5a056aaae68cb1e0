// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package builder

import (
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/multicluster"
)

func TestEngageOptionsFilter(t *testing.T) {
	notB := WithClusterFilter(func(name multicluster.ClusterName, _ cluster.Cluster) bool { return name != "b" })
	for _, tc := range []struct {
		name    string
		options []EngageOptions
		want    map[multicluster.ClusterName]bool
	}{
		{name: "default covers every engaged cluster", want: map[multicluster.ClusterName]bool{"": true, "a": true, "b": true}},
		{name: "no local", options: []EngageOptions{WithEngageWithLocalCluster(false)}, want: map[multicluster.ClusterName]bool{"": false, "a": true, "b": true}},
		{name: "local only", options: []EngageOptions{WithEngageWithLocalCluster(true), WithEngageWithProviderClusters(false)}, want: map[multicluster.ClusterName]bool{"": true, "a": false, "b": false}},
		{name: "filter", options: []EngageOptions{notB}, want: map[multicluster.ClusterName]bool{"": true, "a": true, "b": false}},
		{name: "later options win field by field, filters accumulate", options: []EngageOptions{WithEngageWithProviderClusters(false), notB, WithEngageWithProviderClusters(true)}, want: map[multicluster.ClusterName]bool{"": true, "a": true, "b": false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in WatchesInput
			for _, o := range tc.options {
				o.ApplyToWatches(&in)
			}
			f := in.engage.filter()
			for name, want := range tc.want {
				if got := f(name, nil); got != want {
					t.Errorf("cluster %q: got %v, want %v", name, got, want)
				}
			}
		})
	}
	if !WithEngageWithLocalCluster(true).wantsLocal() || WithEngageWithLocalCluster(false).wantsLocal() || (EngageOptions{}).wantsLocal() {
		t.Fatal("wantsLocal must be true only when the local cluster is asked for explicitly")
	}
}
