// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterprofile

import (
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"

	"sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
)

// ConditionJoined is the KEP-4322 condition a cluster manager sets while the cluster is under
// its management. cluster-inventory-api has no Go constant for it.
const ConditionJoined = "Joined"

// ControlPlaneHealthy reports whether a ClusterProfile's ControlPlaneHealthy condition is True,
// the readiness the Cluster Inventory API maintainers recommend. It is the default of
// Options.IsReady.
func ControlPlaneHealthy(_ context.Context, cp *v1alpha1.ClusterProfile) bool {
	return meta.IsStatusConditionTrue(cp.Status.Conditions, v1alpha1.ClusterConditionControlPlaneHealthy)
}

// ConditionsTrue returns an Options.IsReady that requires every one of the given condition
// types to be True, e.g. ConditionsTrue(v1alpha1.ClusterConditionControlPlaneHealthy,
// ConditionJoined).
func ConditionsTrue(types ...string) func(context.Context, *v1alpha1.ClusterProfile) bool {
	types = slices.Clone(types)
	return func(_ context.Context, cp *v1alpha1.ClusterProfile) bool {
		for _, t := range types {
			if !meta.IsStatusConditionTrue(cp.Status.Conditions, t) {
				return false
			}
		}
		return true
	}
}

// Always is an Options.IsReady that engages every selected ClusterProfile whatever its
// conditions, for inventories whose cluster manager reports no health.
func Always(context.Context, *v1alpha1.ClusterProfile) bool { return true }

// selects reports whether the options select a ClusterProfile: its namespace, labels and
// Options.Filter.
func (p *Provider) selects(ctx context.Context, cp *v1alpha1.ClusterProfile) bool {
	o := p.opts
	if !p.inNamespaces(cp.Namespace) {
		return false
	}
	if o.Selector != nil && !o.Selector.Matches(labels.Set(cp.Labels)) {
		return false
	}
	return o.Filter == nil || o.Filter(ctx, cp)
}

// inNamespaces reports whether Options.Namespaces covers ns. New's host cache holds nothing
// else, but the cache of a host given to NewForHost may.
func (p *Provider) inNamespaces(ns string) bool {
	return len(p.opts.Namespaces) == 0 || slices.Contains(p.opts.Namespaces, ns)
}
