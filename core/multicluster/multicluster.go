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
