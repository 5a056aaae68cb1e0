// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package sharding

import (
	"math"

	"mcr.dev/core/multicluster"
)

// Peer is a live replica of a group as seen by the others.
type Peer struct {
	// ID is the replica's identity (Options.Identity).
	ID string
	// Weight is the replica's share of the fleet relative to the others (Options.Weight). A
	// weight that is not a positive finite number counts as 1.
	Weight float64
}

// Owner returns the peer that owns the cluster by weighted rendezvous (highest random weight)
// hashing, and false when there are no peers.
//
// Every peer gets a pseudo-random score per cluster, computed from the cluster name and the
// peer's ID only, and the highest score wins. All replicas that see the same peers therefore
// agree on the owner without talking to each other, and adding or removing one peer only moves
// the clusters that peer wins or won: about 1/N of the fleet.
//
// Weights use the score -w/ln(u), with u a uniform hash in (0, 1): a peer's chance to win is
// exactly its weight divided by the sum of weights, and no arithmetic can overflow (the
// multiplication of a 64-bit hash by an integer weight, which some implementations use, wraps
// around and breaks proportionality).
func Owner(cluster multicluster.ClusterName, peers []Peer) (Peer, bool) {
	if len(peers) == 0 {
		return Peer{}, false
	}
	ch := stringHash(string(cluster))
	best, bestScore := peers[0], score(ch, peers[0])
	for _, p := range peers[1:] {
		s := score(ch, p)
		// Ties are practically impossible; breaking them by ID keeps the result independent
		// of the order of peers.
		if s > bestScore || (s == bestScore && p.ID < best.ID) {
			best, bestScore = p, s
		}
	}
	return best, true
}

// score is the rendezvous score of a peer for the cluster whose name hashes to clusterHash.
func score(clusterHash uint64, p Peer) float64 {
	h := mix64(clusterHash ^ mix64(stringHash(p.ID)+0x9e3779b97f4a7c15))
	// The top 53 bits give a float64 uniform in (0, 1); never 0 (ln would be -Inf) nor 1.
	u := (float64(h>>11) + 0.5) / (1 << 53)
	return -effectiveWeight(p.Weight) / math.Log(u)
}

func effectiveWeight(w float64) float64 {
	if w > 0 && !math.IsInf(w, 0) { // NaN fails w > 0
		return w
	}
	return 1
}

// stringHash is FNV-1a: stable across processes, architectures and Go versions, which the
// agreement between replicas depends on (hash/maphash is seeded per process).
func stringHash(s string) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= prime
	}
	return h
}

// mix64 is the SplitMix64 finalizer. FNV alone mixes the last bytes of similar names poorly
// (cluster-1, cluster-2, ...); the finalizer spreads every input bit over the whole output.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
