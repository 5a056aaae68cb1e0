// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package sharding_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"mcr.dev/core/multicluster"
	"mcr.dev/core/sharding"
)

func clusterNames(n int) []multicluster.ClusterName {
	names := make([]multicluster.ClusterName, n)
	for i := range names {
		names[i] = multicluster.ClusterName(fmt.Sprintf("cluster-%d", i))
	}
	return names
}

func equalPeers(n int) []sharding.Peer {
	peers := make([]sharding.Peer, n)
	for i := range peers {
		peers[i] = sharding.Peer{ID: fmt.Sprintf("replica-%d", i), Weight: 1}
	}
	return peers
}

func owners(t *testing.T, names []multicluster.ClusterName, peers []sharding.Peer) map[multicluster.ClusterName]string {
	t.Helper()
	got := make(map[multicluster.ClusterName]string, len(names))
	for _, n := range names {
		p, ok := sharding.Owner(n, peers)
		if !ok {
			t.Fatalf("no owner for %q among %d peers", n, len(peers))
		}
		got[n] = p.ID
	}
	return got
}

func shares(owned map[multicluster.ClusterName]string) map[string]int {
	s := map[string]int{}
	for _, id := range owned {
		s[id]++
	}
	return s
}

func TestOwnerWithoutPeers(t *testing.T) {
	if _, ok := sharding.Owner("a", nil); ok {
		t.Fatal("Owner must report no owner when there are no peers")
	}
}

func TestOwnerDoesNotDependOnPeerOrder(t *testing.T) {
	peers := equalPeers(7)
	reversed := slices.Clone(peers)
	slices.Reverse(reversed)
	names := clusterNames(2000)
	a, b := owners(t, names, peers), owners(t, names, reversed)
	for _, n := range names {
		if a[n] != b[n] {
			t.Fatalf("cluster %q: owner %q with one peer order, %q with another", n, a[n], b[n])
		}
	}
}

// The share of each of 5 equal peers over 20,000 clusters is 4,000 with a standard deviation
// of about 57; 6% (240) is more than four of them, and the hash is deterministic anyway.
func TestOwnerSpreadsClustersEvenly(t *testing.T) {
	const n, peersN = 20000, 5
	got := shares(owners(t, clusterNames(n), equalPeers(peersN)))
	want := float64(n) / peersN
	for id, count := range got {
		if math.Abs(float64(count)-want) > 0.06*want {
			t.Errorf("%s owns %d clusters, want %.0f ± 6%%", id, count, want)
		}
	}
	if len(got) != peersN {
		t.Errorf("%d peers own clusters, want %d", len(got), peersN)
	}
}

// Similar names (the common case: cluster-1, cluster-2, ...) and short ones must not cluster on
// one peer.
func TestOwnerSpreadsSimilarShortNames(t *testing.T) {
	var names []multicluster.ClusterName
	for c := 'a'; c <= 'z'; c++ {
		for d := 'a'; d <= 'z'; d++ {
			names = append(names, multicluster.ClusterName([]rune{c, d}))
		}
	}
	got := shares(owners(t, names, equalPeers(4)))
	want := float64(len(names)) / 4
	for id, count := range got {
		if math.Abs(float64(count)-want) > 0.2*want {
			t.Errorf("%s owns %d of %d two-letter clusters, want %.0f ± 20%%", id, count, len(names), want)
		}
	}
}

func TestAddingAPeerMovesOnlyItsShare(t *testing.T) {
	const n = 12000
	names := clusterNames(n)
	before := owners(t, names, equalPeers(5))
	after := owners(t, names, equalPeers(6))
	newcomer := equalPeers(6)[5].ID
	moved := 0
	for _, name := range names {
		if before[name] == after[name] {
			continue
		}
		moved++
		if after[name] != newcomer {
			t.Fatalf("cluster %q moved from %s to %s, not to the new peer", name, before[name], after[name])
		}
	}
	if want := float64(n) / 6; math.Abs(float64(moved)-want) > 0.06*want {
		t.Errorf("%d of %d clusters moved, want about %.0f (1/6)", moved, n, want)
	}
}

func TestRemovingAPeerMovesOnlyItsClusters(t *testing.T) {
	names := clusterNames(10000)
	peers := equalPeers(5)
	before := owners(t, names, peers)
	gone := peers[2].ID
	after := owners(t, names, slices.Delete(slices.Clone(peers), 2, 3))
	for _, name := range names {
		if before[name] != gone && before[name] != after[name] {
			t.Fatalf("cluster %q moved from %s to %s although its owner stayed", name, before[name], after[name])
		}
		if after[name] == gone {
			t.Fatalf("cluster %q still owned by the removed peer", name)
		}
	}
}

func TestOwnerRespectsWeights(t *testing.T) {
	for _, scale := range []float64{1, 1e15} { // large weights must stay proportional: no overflow
		peers := []sharding.Peer{{ID: "small", Weight: 1 * scale}, {ID: "medium", Weight: 2 * scale}, {ID: "large", Weight: 5 * scale}}
		const n = 40000
		got := shares(owners(t, clusterNames(n), peers))
		for _, p := range peers {
			want := n * p.Weight / (8 * scale)
			if math.Abs(float64(got[p.ID])-want) > 0.05*want {
				t.Errorf("scale %g: %s (weight %g) owns %d clusters, want %.0f ± 5%%", scale, p.ID, p.Weight, got[p.ID], want)
			}
		}
	}
}

func TestInvalidWeightsCountAsOne(t *testing.T) {
	names := clusterNames(3000)
	ones := owners(t, names, []sharding.Peer{{ID: "a", Weight: 1}, {ID: "b", Weight: 1}, {ID: "c", Weight: 1}})
	odd := owners(t, names, []sharding.Peer{{ID: "a", Weight: 0}, {ID: "b", Weight: math.NaN()}, {ID: "c", Weight: math.Inf(1)}})
	for _, n := range names {
		if ones[n] != odd[n] {
			t.Fatalf("cluster %q: owner %s with weights 1, %s with invalid weights", n, ones[n], odd[n])
		}
	}
}

func BenchmarkOwner(b *testing.B) {
	for _, peersN := range []int{3, 10, 50} {
		b.Run(fmt.Sprintf("peers=%d", peersN), func(b *testing.B) {
			peers := equalPeers(peersN)
			names := clusterNames(1000)
			i := 0
			for b.Loop() {
				sharding.Owner(names[i%len(names)], peers)
				i++
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(peersN), "ns/peer")
		})
	}
}
