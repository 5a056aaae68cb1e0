// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusters

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/multicluster"
)

// Registry remembers which clusters are engaged, for code that needs to enumerate the fleet
// (a provider cannot be asked: the contract has no List). It is a multicluster.Aware and a
// manager runnable: add it to the manager and every engaged cluster is recorded until its
// engage context ends.
//
// The zero value is ready to use. A Registry must not be copied after first use.
type Registry[T cluster.Cluster] struct {
	mu      sync.Mutex
	engaged map[multicluster.ClusterName]*registration[T]
}

type registration[T cluster.Cluster] struct {
	cluster T
	// release deregisters the watch on the engage context of a replaced registration.
	release func() bool
}

// NewRegistry returns an empty Registry.
func NewRegistry[T cluster.Cluster]() *Registry[T] {
	return &Registry[T]{}
}

// Engage records cl under name until ctx ends. Engaging the instance already recorded under
// name is a no-op; a different instance replaces it. It fails only if cl is not a T.
func (r *Registry[T]) Engage(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster) error {
	typed, ok := cl.(T)
	if !ok {
		var zero T
		return fmt.Errorf("engaging cluster %q: registry holds %T, got %T", name, zero, cl)
	}
	if ctx.Err() != nil {
		return nil // already disengaged
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	if r.engaged == nil {
		r.engaged = map[multicluster.ClusterName]*registration[T]{}
	}
	if old, ok := r.engaged[name]; ok {
		if sameInstance(old.cluster, typed) {
			return nil
		}
		old.release()
	}
	reg := &registration[T]{cluster: typed}
	r.engaged[name] = reg
	// No goroutine per cluster: the callback runs once, when the engage context ends.
	reg.release = context.AfterFunc(ctx, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.engaged[name] == reg {
			delete(r.engaged, name)
		}
	})
	return nil
}

// Start blocks until ctx ends, so a manager can run the Registry like any runnable.
func (r *Registry[T]) Start(ctx context.Context) error {
	<-ctx.Done()
	return nil
}

// NeedLeaderElection reports false: every replica needs to know the engaged clusters.
func (r *Registry[T]) NeedLeaderElection() bool { return false }

// Get returns the named engaged cluster, or an error wrapping multicluster.ErrClusterNotFound.
func (r *Registry[T]) Get(ctx context.Context, name multicluster.ClusterName) (cluster.Cluster, error) {
	cl, err := r.GetTyped(ctx, name)
	if err != nil {
		return nil, err
	}
	return cl, nil
}

// GetTyped returns the named engaged cluster, or an error wrapping
// multicluster.ErrClusterNotFound.
func (r *Registry[T]) GetTyped(_ context.Context, name multicluster.ClusterName) (T, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	reg, ok := r.engaged[name]
	if !ok {
		var zero T
		return zero, fmt.Errorf("cluster %q: %w", name, multicluster.ErrClusterNotFound)
	}
	return reg.cluster, nil
}

// ClusterNames returns the names of the engaged clusters, sorted.
func (r *Registry[T]) ClusterNames() []multicluster.ClusterName {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(maps.Keys(r.engaged))
}

// Len returns the number of engaged clusters.
func (r *Registry[T]) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.engaged)
}

// ForEach calls fn for every engaged cluster in name order, on a snapshot taken before the first
// call, so fn may call back into the Registry. It stops at the first error and returns it,
// naming the cluster.
func (r *Registry[T]) ForEach(fn func(name multicluster.ClusterName, cl T) error) error {
	r.mu.Lock()
	names := slices.Sorted(maps.Keys(r.engaged))
	snapshot := make([]T, len(names))
	for i, name := range names {
		snapshot[i] = r.engaged[name].cluster
	}
	r.mu.Unlock()

	for i, name := range names {
		if err := fn(name, snapshot[i]); err != nil {
			return fmt.Errorf("cluster %q: %w", name, err)
		}
	}
	return nil
}

var _ multicluster.Aware = &Registry[cluster.Cluster]{}
