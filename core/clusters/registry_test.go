// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusters_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/clusters"
	"mcr.dev/core/internal/testcheck"
	"mcr.dev/core/multicluster"
)

func TestRegistryTracksEngagements(t *testing.T) {
	ctx := t.Context()
	var reg clusters.Registry[cluster.Cluster]
	a1, a2, b := memberCluster(t, "a"), memberCluster(t, "a"), memberCluster(t, "b")

	ctxA1, disengageA1 := context.WithCancel(ctx)
	ctxB, disengageB := context.WithCancel(ctx)
	if err := reg.Engage(ctxA1, "a", a1); err != nil {
		t.Fatal(err)
	}
	if err := reg.Engage(ctxB, "b", b); err != nil {
		t.Fatal(err)
	}
	// The same instance again is a no-op.
	if err := reg.Engage(ctx, "a", a1); err != nil {
		t.Fatal(err)
	}
	if got := reg.ClusterNames(); !slices.Equal(got, []multicluster.ClusterName{"a", "b"}) {
		t.Fatalf("ClusterNames = %v", got)
	}

	// A new instance replaces the old; the end of the old engagement leaves it alone.
	ctxA2, disengageA2 := context.WithCancel(ctx)
	defer disengageA2()
	if err := reg.Engage(ctxA2, "a", a2); err != nil {
		t.Fatal(err)
	}
	disengageA1()
	disengageB()
	testcheck.WaitFor(t, "b to be forgotten", func() bool { return reg.Len() == 1 })
	if got, err := reg.Get(ctx, "a"); err != nil || got != a2 {
		t.Fatalf("Get a = %v, %v; want the replacement", got, err)
	}
	if _, err := reg.Get(ctx, "b"); !errors.Is(err, multicluster.ErrClusterNotFound) {
		t.Fatalf("Get b: %v", err)
	}

	// Engaging with an ended context records nothing.
	if err := reg.Engage(ctxB, "b", b); err != nil || reg.Len() != 1 {
		t.Fatalf("Engage with an ended context: %v, Len %d", err, reg.Len())
	}
}

func TestRegistryForEachDoesNotHoldTheLock(t *testing.T) {
	ctx := t.Context()
	var reg clusters.Registry[cluster.Cluster]
	for _, name := range []multicluster.ClusterName{"b", "a"} {
		if err := reg.Engage(ctx, name, memberCluster(t, "a")); err != nil {
			t.Fatal(err)
		}
	}
	var seen []multicluster.ClusterName
	err := reg.ForEach(func(name multicluster.ClusterName, cl cluster.Cluster) error {
		seen = append(seen, name)
		// Calling back into the registry would deadlock if ForEach held its lock.
		if _, err := reg.Get(ctx, name); err != nil {
			return err
		}
		return reg.Engage(ctx, name+"-copy", cl)
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seen, []multicluster.ClusterName{"a", "b"}) {
		t.Fatalf("visited %v, want [a b] (the snapshot, in order)", seen)
	}
	if reg.Len() != 4 {
		t.Fatalf("Len = %d, want 4", reg.Len())
	}

	boom := errors.New("boom")
	err = reg.ForEach(func(name multicluster.ClusterName, _ cluster.Cluster) error { return boom })
	if !errors.Is(err, boom) || err.Error() != `cluster "a": boom` {
		t.Fatalf("ForEach error = %v, want the first error naming its cluster", err)
	}
}

func TestRegistryRejectsOtherTypes(t *testing.T) {
	reg := clusters.NewRegistry[*startTracker]()
	if err := reg.Engage(t.Context(), "a", memberCluster(t, "a")); err == nil {
		t.Fatal("a Registry of *startTracker accepted a plain cluster")
	}
	tracked := trackStart(memberCluster(t, "a"))
	if err := reg.Engage(t.Context(), "a", tracked); err != nil {
		t.Fatal(err)
	}
	if got, err := reg.GetTyped(t.Context(), "a"); err != nil || got != tracked {
		t.Fatalf("GetTyped = %v, %v", got, err)
	}
}
