// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package ownership

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	mchandler "mcr.dev/core/handler"
	"mcr.dev/core/multicluster"
	mcreconcile "mcr.dev/core/reconcile"
)

// EnqueueOwner returns a handler for the builder's Watches: an event of an object marked by
// SetOwner with an owner of ownerKind, in any cluster the watch covers, enqueues the owner's
// request in the owner's cluster. Objects without the marking, with a bad one or with an owner
// of another kind are ignored.
//
//	Watches(&corev1.ConfigMap{}, ownership.EnqueueOwner(fleetConfigMapKind))
func EnqueueOwner(ownerKind schema.GroupKind) mchandler.EventHandlerFunc {
	mapToOwner := MapToOwner(ownerKind)
	return mchandler.EnqueueRequestsFromClusterMapFunc(func(ctx context.Context, source multicluster.ClusterName, obj client.Object) []mcreconcile.Request {
		reqs := mapToOwner(ctx, obj)
		if len(reqs) == 0 && obj.GetLabels()[LabelOwnerUID] != "" {
			if _, err := GetOwner(obj); err != nil {
				log.FromContext(ctx).V(1).Info("Ignoring an object with a bad ownership marking", "cluster", source, "error", err.Error())
			}
		}
		return reqs
	})
}

// MapToOwner maps an object marked by SetOwner with an owner of ownerKind to its owner's
// request, in the owner's cluster. It is the map function of EnqueueOwner, for a source of a
// cluster the manager does not engage (handler.TypedEnqueueRequestsFromMapFunc over a
// source.Kind of that cluster's cache).
func MapToOwner(ownerKind schema.GroupKind) func(context.Context, client.Object) []mcreconcile.Request {
	return func(_ context.Context, obj client.Object) []mcreconcile.Request {
		owner, err := GetOwner(obj)
		if err != nil || owner.GroupKind() != ownerKind {
			return nil
		}
		return []mcreconcile.Request{{
			ClusterName: owner.Cluster,
			Request:     reconcile.Request{NamespacedName: owner.Key()},
		}}
	}
}
