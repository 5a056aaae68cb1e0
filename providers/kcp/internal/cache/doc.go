// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package cache is the shared-cache side of the kcp provider: how the logical clusters of one
// endpoint (a virtual workspace URL, one shard) read from one cache. The kcp package discovers
// endpoints and logical clusters and decides what to engage; this package builds what it
// engages.
//
// # Wildcard cache
//
// A Wildcard is the cache of one endpoint: a controller-runtime cache on <url>/clusters/* whose
// informers are kcp's cluster-aware ones, keyed and indexed by logical cluster. There is one
// informer per type per endpoint, whatever the number of logical clusters; field indexes
// (IndexField) are added to it once per endpoint and keyed by logical cluster and namespace.
//
// # Scoped views
//
// A Scoped cache is one logical cluster's view of its endpoint's Wildcard: Get, List and the
// event handlers of its informers see that logical cluster's objects only, and every handler
// added through it is removed when the logical cluster is disengaged. A Cluster is the
// cluster.Cluster the provider engages: a Scoped cache, a client that writes to
// <url>/clusters/<name> and reads from that cache, a live API reader and event recorders.
//
// # Truth check
//
// kcp's informer (kcp-dev/apimachinery v2.32.0) cannot delete the tombstone a relist makes for
// an object deleted while the watch was down, so such an object would stay in the cache unseen.
// Each informer of a Wildcard notices its own relists; a TruthCheck then lists its type live and
// removes, and reports to the informer's handlers, the objects the informer missed the deletion
// of. The provider runs the checks the Wildcard reports as Relisted (truth.go says how relists
// are noticed and why objects are judged by UID).
package cache
