//go:build upstream_cr025

// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// This test needs a github.com/kcp-dev/multicluster-provider whose apiexport package compiles
// against controller-runtime v0.25; v0.8.0 does not (see upstream_skip_test.go). Bump the version
// in go.mod, run it with -tags upstream_cr025, then drop the tag and the skip.

package kcp_test

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kcp-dev/logicalcluster/v3"
	"github.com/kcp-dev/multicluster-provider/apiexport"

	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/kcp"
)

// TestUpstreamProviderEngagesSameLogicalClusters runs kcp-dev's own apiexport provider
// (github.com/kcp-dev/multicluster-provider v0.8.0) next to ours on the same slice of two
// shards: that it engages the same logical clusters, reads their objects from its wildcard cache
// and disengages them shows that the test shards speak kcp's virtual-workspace protocol.
func TestUpstreamProviderEngagesSameLogicalClusters(t *testing.T) {
	one := newLogicalCluster(t, "east", uniqueName(t, "one"), "")
	two := newLogicalCluster(t, "west", uniqueName(t, "two"), "")
	three := newLogicalCluster(t, "north", uniqueName(t, "three"), "")
	configMap(t, "east", one.cluster, "up-one", nil)
	configMap(t, "west", two.cluster, "up-two", nil)
	configMap(t, "north", three.cluster, "up-three", nil)
	slice := newSlice(t, shardA.URL(), shardB.URL())

	ours := start(t, slice, kcp.Options{})
	up, err := apiexport.New(providerConfig(), slice, apiexport.Options{Scheme: scheme})
	if err != nil {
		t.Fatalf("apiexport.New: %v", err)
	}
	rec := providertest.NewRecorder()
	providertest.RunInBackground(t, "the upstream provider's Start", waitTimeout, func(ctx context.Context) error { return up.Start(ctx, rec) })

	for _, c := range []struct {
		b    binding
		want string
	}{{one, "up-one"}, {two, "up-two"}, {three, "up-three"}} {
		name := multicluster.ClusterName(c.b.cluster)
		ours.waitEngaged(t, c.b.cluster)
		e := rec.WaitEngaged(t, up, name, waitTimeout)
		expectNames(t, "the upstream cache of "+string(name)+" lists its own ConfigMaps only", e.Cluster.GetClient(), []string{c.want})
		cm := &corev1.ConfigMap{}
		if err := e.Cluster.GetClient().Get(t.Context(), client.ObjectKey{Namespace: "default", Name: c.want}, cm); err != nil {
			t.Errorf("upstream Get of %s in %s: %v", c.want, name, err)
		} else if got := logicalcluster.From(cm); got != c.b.cluster {
			t.Errorf("upstream read %s as part of logical cluster %q, want %s", c.want, got, c.b.cluster)
		}
	}
	mine := func(names []multicluster.ClusterName) []multicluster.ClusterName {
		return slices.DeleteFunc(slices.Clone(names), func(n multicluster.ClusterName) bool {
			return n != multicluster.ClusterName(one.cluster) && n != multicluster.ClusterName(two.cluster) && n != multicluster.ClusterName(three.cluster)
		})
	}
	if got, want := mine(rec.Engaged()), mine(ours.rec.Engaged()); !slices.Equal(got, want) {
		t.Errorf("the upstream provider engaged %q, ours %q", got, want)
	}

	// Both disengage a logical cluster whose binding is deleted.
	upOne, _ := rec.Latest(multicluster.ClusterName(one.cluster))
	oursOne, _ := ours.rec.Latest(multicluster.ClusterName(one.cluster))
	if err := one.delete(t.Context()); err != nil {
		t.Fatal(err)
	}
	ours.waitDisengaged(t, one.cluster, oursOne)
	rec.WaitDisengaged(t, up, multicluster.ClusterName(one.cluster), upOne, waitTimeout)
}
