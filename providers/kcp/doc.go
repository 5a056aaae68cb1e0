// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package kcp is a cluster provider that engages the logical clusters of a kcp virtual
// workspace, typically every workspace that binds an APIExport, as clusters of a multi-cluster
// manager: each logical cluster gets a client scoped to it and a cache that reads from one cache
// shared by all logical clusters of the same shard.
//
// It watches, in the workspace the config given to New points at, the endpoint object of the
// given name (Options.EndpointObject, by default the APIExportEndpointSlice; its URLs are read
// by Options.EndpointURLs, so any object the operator owns can list them), and on each endpoint
// URL it lists (the APIExport's virtual workspace on one shard) the objects of
// Options.ObjectToWatch (APIBindings by default) through one wildcard cache on
// <url>/clusters/*. A logical cluster is engaged while at least one of its objects is ready
// (Options.IsReady, by default BindingReady) and disengaged when none is or its last object is
// deleted. Options.Handlers are told about every object added, updated and deleted, as kcp-dev's
// handlers.Handler values are. Logical clusters have no credentials of their own: the config's
// identity reaches them all through the virtual workspace.
//
// NewInitializing is the same provider for the initializing workspaces of a WorkspaceType: it
// engages each workspace of the type while its LogicalCluster lists the type's initializer, with
// a client that reads the workspace live, for initializer controllers.
//
// A cluster is named after its logical cluster, the kcp.io/cluster annotation of its objects,
// as in kcp-dev's multicluster-provider; Provider.GetByPath resolves a workspace path.
//
// Create the provider with New (or NewInitializing) and hand it to the manager, which starts it;
// no SetupWithManager is needed. Options embeds kit.Options (mcr.dev/core/providers/kit), the
// fields every provider shares; the provider runs on that kit's engine and engage step.
//
// docs/providers/kcp.md in the mcr repository is the full reference: shared caches, readiness,
// Events, metrics and troubleshooting, RBAC and permission claims, options, and parity with
// kcp-dev's provider (endpoint objects, handlers, initializing workspaces).
package kcp
