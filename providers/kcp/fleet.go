// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kcp

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	corefleet "mcr.dev/core/fleet"
	"mcr.dev/core/multicluster"
)

// Fleet returns the fleet-wide reader of the provider's engaged logical clusters: core's
// fleet.Reader (mcr.dev/core/fleet) over a backend that reads the endpoints' shared caches
// (internal/fleet), so that fleet.ListItems, fleet.ListByCluster, fleet.InClusters and
// fleet.Registration serve it as they serve a reader of any other provider. A logical cluster
// takes part from the moment its engagement with the manager has completed until it is
// disengaged; objects of logical clusters that are not engaged (not ready, being disengaged, or
// refused by the manager) are never returned. It is cheap; every call returns a reader of the
// same state.
func (p *Provider) Fleet() *corefleet.Reader { return corefleet.NewWithBackend(p.fleet) }

// Fleet is core's fleet reader, which Provider.Fleet returns.
//
// Deprecated: use *fleet.Reader of mcr.dev/core/fleet.
type Fleet = corefleet.Reader

// InClusters restricts a fleet reader's List to the named logical clusters.
//
// Deprecated: use fleet.InClusters of mcr.dev/core/fleet, which this is.
type InClusters = corefleet.InClusters

// FleetRegistration is a handler added with the fleet reader's AddEventHandler.
//
// Deprecated: use *fleet.Registration of mcr.dev/core/fleet, which this is.
type FleetRegistration = corefleet.Registration

// ListByCluster lists as the fleet reader's List does and returns the listed objects by logical
// cluster.
//
// Deprecated: use fleet.ListByCluster of mcr.dev/core/fleet, which this calls.
func ListByCluster[T client.Object](ctx context.Context, reader *corefleet.Reader, list client.ObjectList, opts ...client.ListOption) (map[multicluster.ClusterName][]T, error) {
	return corefleet.ListByCluster[T](ctx, reader, list, opts...)
}

// Start runs the provider until ctx ends, as kit.Members.Start does, engaging logical clusters
// with aware; the manager calls it. It passes every engagement through the provider's Fleet
// first, so that fleet-wide reads follow exactly the logical clusters the manager engaged.
func (p *Provider) Start(ctx context.Context, aware multicluster.Aware) error {
	return p.Members.Start(ctx, fleetAware{p: p, next: aware})
}

// fleetAware engages a logical cluster with the manager's Aware, then makes it part of the
// fleet-wide reads until the engagement's context ends.
type fleetAware struct {
	p    *Provider
	next multicluster.Aware
}

func (a fleetAware) Engage(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster) error {
	if a.next != nil {
		if err := a.next.Engage(ctx, name, cl); err != nil {
			return err
		}
	}
	if lc, ok := cl.(*logicalCluster); ok {
		a.p.fleet.Engaged(ctx, lc.View())
	}
	return nil
}

// FleetHandler is told about the objects of one type of every engaged logical cluster.
//
// Deprecated: use fleet.Handler of mcr.dev/core/fleet, which this is.
type FleetHandler = corefleet.Handler

// FleetHandlerFuncs is a FleetHandler of functions.
//
// Deprecated: use fleet.HandlerFuncs of mcr.dev/core/fleet, which this is.
type FleetHandlerFuncs = corefleet.HandlerFuncs
