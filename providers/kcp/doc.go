// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package kcp is a cluster provider that engages the logical clusters of a kcp virtual
// workspace, typically every workspace that binds an APIExport: it follows the endpoint object
// (by default the APIExportEndpointSlice) in the workspace of the config given to New, watches
// each shard's virtual workspace through one wildcard cache, and engages a logical cluster while
// one of its objects (APIBindings by default) is ready. A cluster is named after its logical
// cluster (the kcp.io/cluster annotation); each gets a client scoped to it and a cache view of
// its shard's shared cache. Logical clusters have no credentials of their own: the config's
// identity reaches them all.
//
// Create it with New, or NewInitializing for the initializing workspaces of a WorkspaceType,
// and hand it to the manager, which starts it. Options embeds kit.Options, the fields every
// provider shares.
//
// See docs/providers/kcp.md in the mcr repository: shared caches, readiness, reconnects, RBAC and
// permission claims, options, fleet-wide reads and parity with kcp-dev's provider.
package kcp

// Where the code is: this package discovers endpoints and logical clusters and decides what to
// engage (provider.go, endpoints.go, logicalclusters.go, initializing.go, paths.go, with
// options.go, events.go, metrics.go and handlers.go); internal/cache builds what it engages (an
// endpoint's wildcard cache, the scoped view and cluster of each logical cluster, the truth
// check after a relist); internal/fleet reads the engaged logical clusters for Provider.Fleet;
// fleet.go connects the provider to it.
