// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package multicluster is the provider contract of mcr: the names a provider and a manager agree
// on. Every type here is an alias of sigs.k8s.io/multicluster-runtime/pkg/multicluster, so a
// provider written for multicluster-runtime runs under an mcr manager and every mcr provider runs
// under a stock multicluster-runtime manager.
//
// The contract, as mcr reads and enforces it (the conformance suite checks each rule):
//
//   - A provider announces a cluster by calling Aware.Engage with a context that stays alive for as
//     long as the cluster is part of the fleet. Canceling that context is the only disengage
//     signal. It must never be derived from a reconcile context.
//   - A provider engages a cluster only after the cluster has been started and its cache has synced
//     (mcr's clusters helpers do this, with a timeout).
//   - Engaging the same instance under the same name again is a no-op; a different instance under
//     an engaged name replaces the old one (re-engage), for example after a credential rotation.
//   - Provider.Get returns the engaged instance, or an error wrapping ErrClusterNotFound; never
//     (nil, nil).
//   - Provider.IndexField applies to every current and every future cluster.
//   - ProviderRunnable.Start blocks until its context ends; the manager calls it, users do not.
package multicluster
