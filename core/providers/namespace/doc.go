// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package namespace provides a provider that turns every Namespace of one host cluster into a
// cluster of the fleet: cheap multi-tenancy, and a fast way to exercise multi-cluster
// controllers against a single apiserver.
//
// # Naming and mapping
//
// The namespace "team-a" of the host becomes the cluster "team-a". Inside it, namespaced
// objects live in the namespace "default" (InnerNamespace): a client, cache or informer of the
// cluster "team-a" reads and writes the host's "team-a" namespace and shows its objects in
// "default". Concretely:
//
//   - Get, Create, Update, Patch, Delete, DeleteAllOf, Apply, and status and other subresource
//     calls accept objects in "default" (or with no namespace) and act on "team-a". Objects in
//     any other namespace do not exist for reads (NotFound, empty lists) and are rejected for
//     writes (BadRequest).
//   - List is restricted to "team-a"; label selectors pass unchanged, and a field selector on
//     metadata.namespace=default is rewritten to the real namespace.
//   - Objects handed to event handlers are deep copies with the namespace rewritten; the shared
//     host cache is never modified.
//   - Cluster-scoped objects (Nodes, ClusterRoles, Namespaces themselves) are the host's,
//     unchanged and shared by all namespace-clusters.
//   - Event recorders record Events into the real namespace.
//
// # Lifecycle
//
// The host cluster is started by its owner, typically by being the manager's local cluster or
// a runnable added to it; the provider never starts it. The provider runs on the provider kit
// (mcr.dev/core/providers/kit): Start watches Namespaces on the host (waiting at most
// CacheSyncTimeout for them to sync); a new namespace is engaged, one that is deleted, or that
// gets a deletionTimestamp, is disengaged. Disengaging at the deletionTimestamp rather than at
// the final delete stops controllers from fighting the namespace controller while it empties a
// terminating namespace, in which the apiserver refuses new objects anyway. Deletions seen only
// as cache.DeletedFinalStateUnknown tombstones are handled like any other delete. A namespace
// that cannot be engaged is retried with backoff, every engaged namespace is synced again
// periodically, and FleetStatus reports whether the first list has been synced and which
// namespaces fail.
//
// # Shared informers and O(1) event dispatch
//
// All namespace-clusters share the host's cache: one informer per kind, with exactly one event
// handler registered on it by this provider. That handler looks up the handlers of the event's
// namespace in a map and calls only those, so the cost of an event does not grow with the
// number of namespaces. Disengaging a namespace-cluster removes its handlers. IndexField is
// applied once to the host cache (repeats are no-ops), where it serves every namespace-cluster.
package namespace
