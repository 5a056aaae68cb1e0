// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package builder

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"mcr.dev/core/multicluster"
	mcsource "mcr.dev/core/source"
)

// ForOption configures For.
type ForOption interface{ ApplyToFor(*ForInput) }

// OwnsOption configures Owns.
type OwnsOption interface{ ApplyToOwns(*OwnsInput) }

// WatchesOption configures Watches. WatchesInput is exported, so other packages can write
// options too.
type WatchesOption interface{ ApplyToWatches(*WatchesInput) }

// watchInput is what For, Owns and Watches have in common.
type watchInput struct {
	predicates   []predicate.Predicate
	onlyMetadata bool
	engage       EngageOptions
}

// AddPredicates adds event filters to the watch.
func (w *watchInput) AddPredicates(p ...predicate.Predicate) {
	w.predicates = append(w.predicates, p...)
}

// SetOnlyMetadata makes the watch cache and deliver metadata only.
func (w *watchInput) SetOnlyMetadata(only bool) { w.onlyMetadata = only }

// MergeEngageOptions merges o into the watch's cluster selection, field by field.
func (w *watchInput) MergeEngageOptions(o EngageOptions) { w.engage = w.engage.merge(o) }

// ForInput is the configuration of For.
type ForInput struct{ watchInput }

// OwnsInput is the configuration of Owns.
type OwnsInput struct {
	watchInput
	matchEveryOwner bool
}

// WatchesInput is the configuration of Watches.
type WatchesInput struct{ watchInput }

// Predicates filters the events of one watch.
type Predicates struct{ predicates []predicate.Predicate }

// WithPredicates filters the events of one watch.
func WithPredicates(predicates ...predicate.Predicate) Predicates {
	return Predicates{predicates: predicates}
}

func (p Predicates) ApplyToFor(in *ForInput)         { in.AddPredicates(p.predicates...) }
func (p Predicates) ApplyToOwns(in *OwnsInput)       { in.AddPredicates(p.predicates...) }
func (p Predicates) ApplyToWatches(in *WatchesInput) { in.AddPredicates(p.predicates...) }

type onlyMetadata struct{}

// OnlyMetadata watches PartialObjectMetadata instead of the full object, in every cluster (the
// kind is resolved with each cluster's scheme).
var OnlyMetadata = onlyMetadata{}

func (onlyMetadata) ApplyToFor(in *ForInput)         { in.SetOnlyMetadata(true) }
func (onlyMetadata) ApplyToOwns(in *OwnsInput)       { in.SetOnlyMetadata(true) }
func (onlyMetadata) ApplyToWatches(in *WatchesInput) { in.SetOnlyMetadata(true) }

type matchEveryOwner struct{}

// MatchEveryOwner makes Owns enqueue every owner of the For type, not only the controller owner.
var MatchEveryOwner = matchEveryOwner{}

func (matchEveryOwner) ApplyToOwns(in *OwnsInput) { in.matchEveryOwner = true }

// ClusterFilterFunc decides whether a watch covers a cluster.
type ClusterFilterFunc = mcsource.ClusterFilterFunc

// EngageOptions select the clusters a watch covers. Unset fields keep their defaults; options
// given several times merge field by field, filters are all applied.
type EngageOptions struct {
	local    *bool
	provider *bool
	filters  []ClusterFilterFunc
}

// WithEngageWithLocalCluster includes (true) or excludes (false) the local cluster. By default
// the local cluster is covered when the manager engages it. With true, the controller watches
// the local cluster even when the manager does not engage it.
func WithEngageWithLocalCluster(engage bool) EngageOptions {
	return EngageOptions{local: &engage}
}

// WithEngageWithProviderClusters includes (true, the default) or excludes (false) the clusters of
// the provider.
func WithEngageWithProviderClusters(engage bool) EngageOptions {
	return EngageOptions{provider: &engage}
}

// WithClusterFilter covers only the clusters for which filter returns true.
func WithClusterFilter(filter ClusterFilterFunc) EngageOptions {
	return EngageOptions{filters: []ClusterFilterFunc{filter}}
}

// WithClustersFromProvider covers only the clusters that provider serves under their name (the
// same instance), for managers that compose several providers.
func WithClustersFromProvider(ctx context.Context, provider multicluster.Provider) EngageOptions {
	return WithClusterFilter(func(name multicluster.ClusterName, cl cluster.Cluster) bool {
		got, err := provider.Get(ctx, name)
		return err == nil && got == cl
	})
}

func (o EngageOptions) merge(other EngageOptions) EngageOptions {
	if other.local != nil {
		o.local = other.local
	}
	if other.provider != nil {
		o.provider = other.provider
	}
	o.filters = append(append([]ClusterFilterFunc(nil), o.filters...), other.filters...)
	return o
}

// filter returns the cluster filter that implements the options.
func (o EngageOptions) filter() ClusterFilterFunc {
	return func(name multicluster.ClusterName, cl cluster.Cluster) bool {
		if name == "" && o.local != nil && !*o.local {
			return false
		}
		if name != "" && o.provider != nil && !*o.provider {
			return false
		}
		for _, f := range o.filters {
			if !f(name, cl) {
				return false
			}
		}
		return true
	}
}

// wantsLocal reports whether the options ask for the local cluster explicitly.
func (o EngageOptions) wantsLocal() bool { return o.local != nil && *o.local }

func (o EngageOptions) ApplyToFor(in *ForInput)         { in.MergeEngageOptions(o) }
func (o EngageOptions) ApplyToOwns(in *OwnsInput)       { in.MergeEngageOptions(o) }
func (o EngageOptions) ApplyToWatches(in *WatchesInput) { in.MergeEngageOptions(o) }
