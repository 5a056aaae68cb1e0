// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package multicluster

import (
	upstream "sigs.k8s.io/multicluster-runtime/pkg/multicluster"
)

// ClusterName names a cluster within a fleet. The empty name is the local (host) cluster.
type ClusterName = upstream.ClusterName

// Aware is anything that can be engaged with a cluster: controllers, runnables, managers.
//
// Engage must not block for long and must be safe to call concurrently for different clusters.
// The context lives exactly as long as the cluster stays engaged.
type Aware = upstream.Aware

// Provider resolves cluster names to clusters and applies field indexes to all of them.
type Provider = upstream.Provider

// ProviderRunnable is a Provider that discovers clusters itself. The manager calls Start with
// itself as the Aware; Start blocks until its context is done.
type ProviderRunnable = upstream.ProviderRunnable

// ErrClusterNotFound is returned (possibly wrapped) by Provider.Get for unknown clusters.
var ErrClusterNotFound = upstream.ErrClusterNotFound

// FleetStatus is what a provider knows about its fleet beyond the engaged clusters; see
// StatusReporter.
type FleetStatus struct {
	// Listed is true once the provider has read its source of truth and tried every member it
	// found there at least once (each is engaged or failing).
	Listed bool
	// Failing names the members the provider found but cannot engage, with the reason, which
	// quotes no credentials.
	Failing map[ClusterName]string
}

// StatusReporter is implemented by providers that report their FleetStatus: every provider
// built on mcr.dev/core/providers/kit does. An mcr extension of the contract; readiness checks
// (manager.FleetReadyCheck) use it when a provider has it.
type StatusReporter interface {
	FleetStatus() FleetStatus
}
