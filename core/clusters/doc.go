// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package clusters holds the bookkeeping every provider needs, so that provider authors write
// discovery and nothing else.
//
// Clusters is the set of clusters a provider has engaged. A provider embeds it (getting Get and
// IndexField of multicluster.Provider for free) and calls Add, AddOrReplace and Remove as its
// source of truth changes. Add does the lifecycle the contract in package multicluster asks for,
// in this order: reserve the name, start the cluster, wait for its cache to sync (bounded by
// Options.CacheSyncTimeout), apply every recorded field index exactly once, make the cluster
// visible to Get, and engage it with the Aware. Any failure rolls all of that back. No lock is
// held while a cluster starts, syncs or is engaged, so one slow or unreachable cluster never
// delays another.
//
// Registry is the other side: an Aware (and manager runnable) that only remembers which clusters
// are engaged, for code that needs to enumerate the fleet, such as a cross-cluster controller.
//
// EqualConfigs compares the credentials and endpoint of two rest.Configs; AddOrReplace uses it by
// default to tell a credential rotation (replace) from a repeated announcement (no-op).
//
// This package depends only on the contract (mcr.dev/core/multicluster), controller-runtime and
// client-go, so the manager and every provider may import it.
package clusters
