// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package sharded is multicluster-runtime's sharded coordinator under its own name and options,
// running mcr's sharding (package mcr.dev/core/sharding, through manager.WithSharding): each
// cluster is engaged on exactly one live replica, chosen by rendezvous hashing over the replicas
// that hold a membership Lease, and fenced by a per-cluster Lease.
//
// The options map onto sharding.Options (see each). What differs from multicluster-runtime:
// the Leases live in the cluster of the manager's host config (kube is not used for them);
// every cluster always has a fence of its own (WithPerClusterLease(false) is ignored: one shared
// fence would let a single replica run at a time); ownership is recomputed at every membership
// renewal, so WithSynchronizationIntervals has no effect; a custom sharder or peer registry
// (WithSharder, WithPeerRegistry) is not available. See docs/advanced/scale-out.md.
package sharded

import (
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/sharding"
)

// Defaults of multicluster-runtime's sharded coordinator, kept so that a ported program shares
// its fleet as before.
const (
	DefaultLeaseNamespace = "kube-system"
	DefaultLeaseName      = "mcr-shard"
	DefaultLeaseDuration  = 20 * time.Second
	DefaultLeaseRenew     = 10 * time.Second
	DefaultFenceThrottle  = 750 * time.Millisecond
)

// Coordinator configures sharding for manager.WithCoordinator.
type Coordinator struct {
	opts sharding.Options
}

var _ mcmanager.Coordinator = &Coordinator{}

// Option configures a Coordinator.
type Option func(*Coordinator)

// New returns a sharded coordinator. kube is accepted for multicluster-runtime's signature; the
// Leases are written with the manager's host config. log receives ownership and membership
// changes.
func New(_ client.Client, log logr.Logger, opts ...Option) *Coordinator {
	c := &Coordinator{opts: sharding.Options{
		Namespace:     DefaultLeaseNamespace,
		Group:         DefaultLeaseName,
		LeaseDuration: DefaultLeaseDuration,
		RenewInterval: DefaultLeaseRenew,
		RetryPeriod:   DefaultFenceThrottle,
		Logger:        log,
	}}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Options returns the sharding options the coordinator gives the manager.
func (c *Coordinator) Options() sharding.Options { return c.opts }

// ManagerOptions returns manager.WithSharding with the coordinator's options.
func (c *Coordinator) ManagerOptions() []mcmanager.Option {
	return []mcmanager.Option{mcmanager.WithSharding(c.opts)}
}

// WithShardLease sets the namespace of the Leases (sharding.Options.Namespace) and the name
// they share (sharding.Options.Group). Defaults: "kube-system", "mcr-shard".
func WithShardLease(ns, name string) Option {
	return func(c *Coordinator) { c.opts.Namespace, c.opts.Group = ns, name }
}

// WithPerClusterLease is accepted and ignored: every cluster has a fence Lease of its own.
func WithPerClusterLease(bool) Option { return func(*Coordinator) {} }

// WithPeerWeight sets this replica's share of the fleet (sharding.Options.Weight); 0 counts as 1.
func WithPeerWeight(w uint32) Option {
	return func(c *Coordinator) { c.opts.Weight = float64(max(w, 1)) }
}

// WithLeaseTimings sets how long a replica's Lease lives unrenewed (sharding.Options.LeaseDuration),
// how often it is renewed (RenewInterval) and how often a taken fence is tried again
// (RetryPeriod). Defaults: 20s, 10s, 750ms.
func WithLeaseTimings(duration, renew, throttle time.Duration) Option {
	return func(c *Coordinator) {
		c.opts.LeaseDuration, c.opts.RenewInterval, c.opts.RetryPeriod = duration, renew, throttle
	}
}

// WithSynchronizationIntervals is accepted and ignored: ownership is recomputed at every
// membership renewal (WithLeaseTimings' renew).
func WithSynchronizationIntervals(_, _ time.Duration) Option { return func(*Coordinator) {} }
