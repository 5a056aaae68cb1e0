// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package fleet reads across the fleet: one Reader answers questions about every cluster
// engaged with a multi-cluster manager ("which clusters still run image v1.2?") instead of a
// loop of List calls, and feeds one event handler from all of them (a dashboard).
//
// A Reader is added to the manager (New) and is engaged with every cluster the manager engages,
// whatever the provider; the local cluster takes part when the manager engages it, or with
// Options.IncludeLocal. It offers:
//
//   - Reader.List: a client-like List across the engaged clusters (or those named by
//     InClusters), with namespaces, label and field selectors and the field indexes added with
//     the manager's GetFieldIndexer, read from each cluster's cache (or API reader) at most
//     Options.MaxConcurrency clusters at a time, each bounded by Options.ClusterTimeout, and
//     sorted by cluster, namespace and name. ListItems and ListByCluster return each object
//     with its cluster.
//   - A per-cluster error report instead of all-or-nothing: a *PartialError names each cluster
//     that could not be read, while the objects of the others are returned.
//   - Reader.AddEventHandler: one Handler told about the objects of a type of every engaged
//     cluster, present and future, each call with its cluster, until Registration.Remove.
//
// The kcp provider has a reader of the same shape for logical clusters (kcp.Provider.Fleet),
// which reads one shared informer per kcp endpoint instead of one per logical cluster; this one
// works with every provider and costs one cache read (and one informer) per cluster.
// docs/advanced/fleet-reads.md compares them and says when to use which.
package fleet
