// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package sharding

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"mcr.dev/core/metrics"
	"mcr.dev/core/multicluster"
)

var (
	_ multicluster.Aware             = &Coordinator{}
	_ manager.Runnable               = &Coordinator{}
	_ manager.LeaderElectionRunnable = &Coordinator{}
)

// leaseCallParallelism bounds the Lease calls a replica makes at once, so that a replica
// joining a large fleet does not open hundreds of requests together.
const leaseCallParallelism = 8

// maxEngageBackoff caps the wait between attempts to engage an owned cluster whose Awares
// failed.
const maxEngageBackoff = time.Minute

// Coordinator decides which of the clusters a provider offers this replica engages. It sits
// between the provider and the Awares: the provider engages every cluster with the
// Coordinator, which engages target only with the clusters this replica owns and holds the
// Lease of. Create it with New and run it with Start (manager.WithSharding does both).
type Coordinator struct {
	opts       Options
	log        logr.Logger
	target     multicluster.Aware
	leases     coordinationv1client.LeaseInterface
	groupLabel string
	memberName string
	members    *memberView // touched by the round goroutine and its helpers only

	trigger chan struct{}

	// mu guards what follows. No Lease call is ever made while holding it, so Engage never
	// waits for the API server.
	mu            sync.Mutex
	started       bool
	stopping      bool
	clusters      map[multicluster.ClusterName]*clusterState
	member        *coordinationv1.Lease // our membership Lease as last written
	freshUntil    time.Time             // our clusters may stay engaged until then
	epoch         uint64                // bumped when membership lapses: older fence writes do not count
	watchdog      *time.Timer
	peers         []Peer
	ownedReported int
}

// clusterState is one cluster offered by the provider, and what this replica does with it.
type clusterState struct {
	name multicluster.ClusterName

	// The latest instance from the provider; tracked is false once the provider disengaged it.
	cl        cluster.Cluster
	provCtx   context.Context
	gen       uint64
	stopWatch func() bool
	tracked   bool

	// held is true while this replica holds the cluster's Lease; fence is that Lease as we
	// last wrote it (its resourceVersion makes the release conditional).
	held  bool
	fence *coordinationv1.Lease

	eng      *engagement
	failures int
	retryAt  time.Time
}

// engagement is the engagement of one cluster instance with the target.
type engagement struct {
	cl       cluster.Cluster
	ctx      context.Context
	cancel   context.CancelFunc
	engaged  bool        // target.Engage returned nil and ctx was still live
	replaces *engagement // the engagement of an older instance, ended once this one is engaged
}

// New returns a Coordinator that engages target with the clusters this replica owns. Options
// are defaulted and validated here.
func New(target multicluster.Aware, opts Options) (*Coordinator, error) {
	if target == nil {
		return nil, errors.New("sharding: target Aware is nil")
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	client, err := coordinationv1client.NewForConfig(opts.Config)
	if err != nil {
		return nil, fmt.Errorf("sharding: creating a Lease client: %w", err)
	}
	return &Coordinator{
		opts:       opts,
		log:        opts.Logger,
		target:     target,
		leases:     client.Leases(opts.Namespace),
		groupLabel: groupLabelValue(opts.Group),
		memberName: MemberLeaseName(opts.Group, opts.Identity),
		members:    newMemberView(),
		trigger:    make(chan struct{}, 1),
		clusters:   map[multicluster.ClusterName]*clusterState{},
	}, nil
}

// Identity is this replica's identity.
func (c *Coordinator) Identity() string { return c.opts.Identity }

// Options returns the options in effect, defaults applied.
func (c *Coordinator) Options() Options { return c.opts }

// Peers returns the live replicas of the group as this replica last saw them, itself included
// while its membership is current, sorted by ID.
func (c *Coordinator) Peers() []Peer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.peers)
}

// Owned returns the clusters this replica holds and has engaged, sorted.
func (c *Coordinator) Owned() []multicluster.ClusterName {
	c.mu.Lock()
	defer c.mu.Unlock()
	var names []multicluster.ClusterName
	for name, st := range c.clusters {
		if st.eng != nil && st.eng.engaged && st.eng.ctx.Err() == nil {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// Engage records a cluster the provider offers. It never waits for the API server: whether
// this replica owns the cluster is decided in the background, which engages the target with it
// once the cluster's Lease is held. Engaging the same instance again is a no-op; a different
// instance under the same name replaces the old one (the target is engaged with the new
// instance before the old engagement ends). The cluster is dropped when ctx ends.
func (c *Coordinator) Engage(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster) error {
	if cl == nil {
		return fmt.Errorf("sharding: cannot engage cluster %q: cluster is nil", name)
	}
	c.mu.Lock()
	if c.stopping {
		c.mu.Unlock()
		return fmt.Errorf("sharding: cannot engage cluster %q: the coordinator has stopped", name)
	}
	st := c.clusters[name]
	if st != nil && st.tracked && st.cl == cl && st.provCtx.Err() == nil {
		c.mu.Unlock()
		return nil
	}
	if st == nil {
		st = &clusterState{name: name}
		c.clusters[name] = st
	}
	if st.stopWatch != nil {
		st.stopWatch()
	}
	st.gen++
	gen := st.gen
	st.cl, st.provCtx, st.tracked = cl, ctx, true
	st.failures, st.retryAt = 0, time.Time{}
	st.stopWatch = context.AfterFunc(ctx, func() { c.providerDisengaged(name, gen) })
	c.mu.Unlock()
	c.kick()
	return nil
}

// providerDisengaged forgets the cluster instance the provider no longer offers; the next
// round releases its Lease.
func (c *Coordinator) providerDisengaged(name multicluster.ClusterName, gen uint64) {
	c.mu.Lock()
	st := c.clusters[name]
	if st == nil || st.gen != gen {
		c.mu.Unlock()
		return
	}
	st.tracked = false
	if st.eng != nil {
		st.eng.cancel() // already ended with the provider's context; this drops our references
		st.eng = nil
	}
	c.reportOwnedLocked()
	c.mu.Unlock()
	c.kick()
}

// kick asks for a round soon.
func (c *Coordinator) kick() {
	select {
	case c.trigger <- struct{}{}:
	default:
	}
}

// NeedLeaderElection is false: every replica takes part.
func (c *Coordinator) NeedLeaderElection() bool { return false }

// Start joins the group and keeps this replica's share of the fleet engaged until ctx ends.
// It then disengages every cluster it owns, releases their Leases and leaves the group, so
// that the other replicas take over at once, and returns.
func (c *Coordinator) Start(ctx context.Context) error {
	c.mu.Lock()
	if c.started {
		c.mu.Unlock()
		return errors.New("sharding: Start called twice")
	}
	c.started = true
	c.mu.Unlock()
	c.log.Info("Joining the group", "group", c.opts.Group, "namespace", c.opts.Namespace, "lease", c.memberName)

	var wg sync.WaitGroup
	wg.Go(func() { c.heartbeat(ctx) })
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			c.shutdown()
			return nil
		case <-c.trigger:
		case <-timer.C:
		}
		timer.Reset(c.round(ctx))
	}
}

// isFreshLocked tells whether this replica's membership is current at now.
func (c *Coordinator) isFreshLocked(now time.Time) bool {
	return now.Before(c.freshUntil)
}

// lapse ends every engagement and forgets every held Lease: this replica's membership can no
// longer be trusted by the others, so they may take its clusters over at any time from now.
// Holding Leases is only re-established by writing them again after rejoining.
func (c *Coordinator) lapse(reason string) {
	c.mu.Lock()
	c.epoch++
	c.freshUntil = time.Time{}
	lost := 0
	for name, st := range c.clusters {
		if st.eng != nil {
			st.eng.cancel()
			st.eng = nil
		}
		if st.held {
			lost++
			st.held, st.fence = false, nil
		}
		if !st.tracked {
			delete(c.clusters, name)
		}
	}
	c.reportOwnedLocked()
	c.mu.Unlock()
	metrics.ShardingOwnershipChanges.WithLabelValues(metrics.OwnershipLost).Add(float64(lost))
	c.log.Info("Membership lapsed: disengaged every cluster", "reason", reason, "clustersLost", lost)
}

// reportOwnedLocked brings the owned-clusters gauge up to date. It adds the difference rather
// than setting the value, so that several coordinators in one process (tests) add up.
func (c *Coordinator) reportOwnedLocked() {
	n := 0
	for _, st := range c.clusters {
		if st.eng != nil && st.eng.engaged {
			n++
		}
	}
	metrics.ShardingOwnedClusters.Add(float64(n - c.ownedReported))
	c.ownedReported = n
}

// parallel runs fn for every item, at most limit at a time, and returns when all are done.
func parallel[T any](items []T, limit int, fn func(T)) {
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for _, it := range items {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			fn(it)
		})
	}
	wg.Wait()
}
