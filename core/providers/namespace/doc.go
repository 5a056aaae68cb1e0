// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package namespace provides a provider that turns every Namespace of one host cluster into a
// cluster of the fleet: cheap multi-tenancy, and a fast way to exercise multi-cluster
// controllers against a single apiserver. The namespace "team-a" is the cluster "team-a", whose
// client, cache and informers show the host's "team-a" namespace as "default" (InnerNamespace);
// cluster-scoped objects are the host's. All namespace-clusters share the host's cache, and an
// event costs the same whatever the number of namespaces.
//
// Create it with New from a host cluster its owner starts (usually the manager's local cluster)
// and hand it to the manager, which starts the provider on the provider kit's engine: a
// namespace is engaged while it exists and is not terminating, failures are retried with
// backoff, and FleetStatus reports the fleet.
//
// See docs/providers/namespace.md in the mcr repository: mapping, lifecycle, cost, RBAC and
// options.
package namespace
