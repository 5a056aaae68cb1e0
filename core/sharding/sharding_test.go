// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package sharding_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/internal/testcheck"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/sharding"
)

func replicaIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("replica-%d", i)
	}
	return ids
}

func TestEachClusterIsEngagedOnExactlyOneReplica(t *testing.T) {
	g := newGroup(t, 30)
	ids := replicaIDs(3)
	for _, id := range ids {
		g.start(id)
	}
	took := g.waitSettled(ids...)
	t.Logf("3 replicas, %d clusters: settled in %v", len(g.names), took)

	want := g.expected(ids...)
	for _, id := range ids {
		r := g.replicas[id]
		owned := g.rec.ownedBy(id)
		if len(owned) == 0 {
			t.Errorf("%s owns no cluster", id)
		}
		// The manager agrees with its Awares, and only answers for the clusters it owns.
		if got := r.mgr.EngagedClusters(); !slices.Equal(got, owned) {
			t.Errorf("%s: EngagedClusters() = %v, its Awares are engaged with %v", id, got, owned)
		}
		for _, n := range g.names {
			_, err := r.mgr.GetCluster(context.Background(), n)
			switch {
			case want[n] == id && err != nil:
				t.Errorf("%s: GetCluster(%q) of an owned cluster: %v", id, n, err)
			case want[n] != id && !errors.Is(err, multicluster.ErrClusterNotFound):
				t.Errorf("%s: GetCluster(%q) of a cluster owned by %s: got %v, want ErrClusterNotFound", id, n, want[n], err)
			}
		}
	}

	// The Leases say the same: one membership Lease per replica, one cluster Lease per cluster
	// held by its owner.
	members := g.leases(sharding.RoleMember)
	for _, id := range ids {
		if members[id] != id {
			t.Errorf("membership Lease of %s: holder %q", id, members[id])
		}
	}
	fences := g.leases(sharding.RoleCluster)
	if len(fences) != len(g.names) {
		t.Errorf("%d cluster Leases, want %d", len(fences), len(g.names))
	}
	for _, n := range g.names {
		if fences[string(n)] != want[n] {
			t.Errorf("Lease of cluster %q held by %q, want %q", n, fences[string(n)], want[n])
		}
	}
}

func TestStoppedReplicaHandsItsClustersOver(t *testing.T) {
	g := newGroup(t, 30)
	ids := replicaIDs(3)
	for _, id := range ids {
		g.start(id)
	}
	g.waitSettled(ids...)
	leaving := g.rec.ownedBy("replica-1")

	g.stop("replica-1")
	took := g.waitSettled("replica-0", "replica-2")
	t.Logf("graceful stop: %d clusters handed over within %v of the replica's return", len(leaving), took)

	if _, ok := g.leases(sharding.RoleMember)["replica-1"]; ok {
		t.Error("the stopped replica's membership Lease is still there")
	}
	for cluster, holder := range g.leases(sharding.RoleCluster) {
		if holder == "replica-1" {
			t.Errorf("the Lease of cluster %q still names the stopped replica", cluster)
		}
	}
}

func TestNewReplicaTakesOnlyItsShare(t *testing.T) {
	g := newGroup(t, 30)
	g.start("replica-0")
	g.start("replica-1")
	g.waitSettled("replica-0", "replica-1")
	before := g.expected("replica-0", "replica-1")

	g.start("replica-2")
	took := g.waitSettled("replica-0", "replica-1", "replica-2")
	after := g.expected("replica-0", "replica-1", "replica-2")

	moved := 0
	for _, n := range g.names {
		if before[n] == after[n] {
			// A cluster that stayed was never disengaged on its owner.
			if got := g.rec.engagements(after[n], n); got != 1 {
				t.Errorf("cluster %q stayed on %s but was engaged %d times", n, after[n], got)
			}
			continue
		}
		moved++
		if after[n] != "replica-2" {
			t.Errorf("cluster %q moved from %s to %s, not to the new replica", n, before[n], after[n])
		}
	}
	if moved == 0 || moved > len(g.names)/2 {
		t.Errorf("%d of %d clusters moved to the new replica, want about a third", moved, len(g.names))
	}
	t.Logf("a third replica joined: %d of %d clusters moved in %v", moved, len(g.names), took)
}

func TestCutOffReplicaIsFailedOverAndRejoins(t *testing.T) {
	g := newGroup(t, 30)
	ids := replicaIDs(3)
	for _, id := range ids {
		g.start(id)
	}
	g.waitSettled(ids...)

	// replica-2 can no longer reach the host cluster: it must disengage on its own before the
	// others take its clusters over (the recorder fails the test on any overlap).
	g.replicas["replica-2"].cut.Store(true)
	lapsed := testcheck.WaitFor(t, "the cut-off replica to disengage", func() bool { return len(g.rec.ownedBy("replica-2")) == 0 })
	took := g.waitSettled("replica-0", "replica-1")
	t.Logf("partition: the cut-off replica disengaged after %v, its clusters were taken over %v later (lease duration %v)", lapsed, took, testLeaseDuration)

	g.replicas["replica-2"].cut.Store(false)
	took = g.waitSettled(ids...)
	t.Logf("the replica rejoined and got its share back in %v", took)
}

func TestClustersComeAndGo(t *testing.T) {
	g := newGroup(t, 10)
	g.start("replica-0")
	g.start("replica-1")
	g.waitSettled("replica-0", "replica-1")

	g.removeCluster("cluster-03")
	g.waitSettled("replica-0", "replica-1")
	testcheck.WaitFor(t, "the Lease of a removed cluster to be deleted", func() bool {
		_, ok := g.leases(sharding.RoleCluster)["cluster-03"]
		return !ok
	})

	g.addCluster("joined-later")
	g.waitSettled("replica-0", "replica-1")
}

func TestAwaresAddedLateGetOwnedClusters(t *testing.T) {
	g := newGroup(t, 12)
	g.start("replica-0")
	g.start("replica-1")
	g.waitSettled("replica-0", "replica-1")

	late := newRecorder()
	if err := g.replicas["replica-0"].mgr.Add(&probe{replica: "replica-0", rec: late}); err != nil {
		t.Fatal(err)
	}
	if got, want := late.ownedBy("replica-0"), g.rec.ownedBy("replica-0"); !slices.Equal(got, want) || len(want) == 0 {
		t.Fatalf("an Aware added late was engaged with %v, want the replica's clusters %v", got, want)
	}
}

// flaky fails the first engagement of every cluster.
type flaky struct {
	mu       sync.Mutex
	attempts map[multicluster.ClusterName]int
}

func (f *flaky) Engage(_ context.Context, name multicluster.ClusterName, _ cluster.Cluster) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.attempts[name]++
	if f.attempts[name] == 1 {
		return errors.New("first engagement fails")
	}
	return nil
}

func (f *flaky) Start(ctx context.Context) error { <-ctx.Done(); return nil }

func TestFailedEngagementIsRolledBackAndRetried(t *testing.T) {
	g := newGroup(t, 6)
	f := &flaky{attempts: map[multicluster.ClusterName]int{}}
	g.start("replica-0", f)
	g.waitSettled("replica-0")
	for _, n := range g.names {
		// The probe was added first: its engagement of the failed attempt was rolled back.
		if got := g.rec.engagements("replica-0", n); got < 2 {
			t.Errorf("cluster %q: the probe was engaged %d times, want a rolled-back attempt and a retry", n, got)
		}
	}
}
