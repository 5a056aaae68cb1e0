// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package sharding

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"mcr.dev/core/metrics"
	"mcr.dev/core/multicluster"
)

// fenceCheckEvery is how many RenewIntervals pass between two checks of every cluster Lease of
// the group (outside those, cluster Leases are only listed while clusters wait to be taken).
const fenceCheckEvery = 10

// release is a cluster Lease to give up.
type release struct {
	name  multicluster.ClusterName
	fence *coordinationv1.Lease
}

// round brings ownership up to date: it refreshes the members, plans which clusters to let go
// of and which to take, releases and acquires their Leases, and engages the clusters it now
// holds. It returns when the next round is due.
func (c *Coordinator) round(ctx context.Context) time.Duration {
	now := time.Now()
	others, nextExpiry, err := c.refreshMembers(ctx, now)
	if err != nil {
		if ctx.Err() == nil {
			c.log.Error(err, "Cannot see the other replicas; ownership unchanged", "retryIn", c.opts.RetryPeriod)
		}
		return c.opts.RetryPeriod
	}
	epoch, releases, acquires := c.plan(others, now)
	c.releaseLeases(ctx, releases)
	waiting, err := c.acquireLeases(ctx, acquires, epoch, now)
	if err != nil {
		if ctx.Err() == nil {
			c.log.Error(err, "Cannot list cluster Leases", "retryIn", c.opts.RetryPeriod)
		}
		return c.opts.RetryPeriod
	}
	// A peer that stays silent is declared expired as soon as it may be, not up to a
	// RenewInterval later.
	next := min(c.opts.RenewInterval, nextExpiry+time.Millisecond)
	if waiting {
		next = min(next, c.opts.RetryPeriod)
	}
	return c.engageOwned(epoch, next)
}

// plan sets the peers and decides, for the epoch it returns, which held clusters to release
// (disengaged here already) and which owned clusters to acquire.
func (c *Coordinator) plan(others []Peer, now time.Time) (uint64, []release, []multicluster.ClusterName) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fresh := c.isFreshLocked(now)
	peers := others
	if fresh {
		peers = append(peers, Peer{ID: c.opts.Identity, Weight: c.opts.Weight})
	}
	slices.SortFunc(peers, func(a, b Peer) int { return strings.Compare(a.ID, b.ID) })
	if !slices.Equal(peers, c.peers) {
		c.log.Info("Peers changed", "peers", peerIDs(peers))
	}
	c.peers = peers
	metrics.ShardingPeers.Set(float64(len(peers)))
	var releases []release
	var acquires []multicluster.ClusterName
	for name, st := range c.clusters {
		want := fresh && st.tracked && c.ownsLocked(name)
		switch {
		case st.held && !want:
			if st.eng != nil {
				// Disengage first: the Lease is only released once nothing runs for it here.
				st.eng.end()
				st.eng = nil
				c.log.Info("Disengaged a cluster this replica no longer owns", "cluster", string(name))
			}
			releases = append(releases, release{name: name, fence: st.fence})
		case !st.held && want:
			acquires = append(acquires, name)
		case !st.held && !st.tracked:
			delete(c.clusters, name)
		}
	}
	c.reportOwnedLocked()
	return c.epoch, releases, acquires
}

// releaseLeases gives up the Leases of the clusters planned for release; a failed release is
// retried by a later round.
func (c *Coordinator) releaseLeases(ctx context.Context, releases []release) {
	parallel(releases, leaseCallParallelism, func(r release) {
		err := c.releaseFence(ctx, r.name, r.fence)
		c.mu.Lock()
		if st := c.clusters[r.name]; err == nil && st != nil && st.held && st.fence == r.fence {
			st.held, st.fence = false, nil
			if !st.tracked {
				delete(c.clusters, r.name)
			}
		}
		c.mu.Unlock()
		if err != nil {
			if ctx.Err() == nil {
				c.log.Error(err, "Cannot release the Lease of a cluster; will retry", "cluster", string(r.name))
			}
			return
		}
		metrics.ShardingOwnershipChanges.WithLabelValues(metrics.OwnershipReleased).Inc()
	})
}

// acquireLeases takes the Leases of the clusters planned for acquisition, checking every
// cluster Lease of the group on the way now and then. It reports whether some cluster is still
// waiting for its Lease, and fails only when the Leases cannot be listed.
func (c *Coordinator) acquireLeases(ctx context.Context, acquires []multicluster.ClusterName, epoch uint64, now time.Time) (bool, error) {
	var fences map[string]*coordinationv1.Lease
	if len(acquires) > 0 || now.Sub(c.members.lastFenceCheck) >= fenceCheckEvery*c.opts.RenewInterval {
		var err error
		fences, err = c.listFences(ctx)
		if err != nil {
			return false, err
		}
		c.checkFences(ctx, fences, now)
	}

	var waiting atomic.Int32
	parallel(acquires, leaseCallParallelism, func(name multicluster.ClusterName) {
		lease, holder, err := c.acquireFence(ctx, name, fences[ClusterLeaseName(c.opts.Group, name)], now)
		switch {
		case err != nil:
			waiting.Add(1)
			if ctx.Err() == nil {
				c.log.Error(err, "Cannot take the Lease of a cluster this replica owns", "cluster", string(name))
			}
			return
		case lease == nil:
			waiting.Add(1)
			c.log.V(1).Info("Waiting for the previous owner to release the cluster", "cluster", string(name), "holder", holder)
			return
		}
		c.mu.Lock()
		st := c.clusters[name]
		// A lapse since the round began voids the write: the Lease names us, but peers may
		// take it over at any time, so it is only trusted after writing it again.
		valid := st != nil && c.epoch == epoch && c.isFreshLocked(time.Now())
		if valid {
			st.held, st.fence = true, lease
		}
		c.mu.Unlock()
		if valid {
			metrics.ShardingOwnershipChanges.WithLabelValues(metrics.OwnershipAcquired).Inc()
			c.log.V(1).Info("Took the Lease of a cluster", "cluster", string(name), "lease", lease.Name)
		}
	})
	return waiting.Load() > 0, nil
}

// engageOwned engages every held and owned cluster not engaged with its current instance yet,
// unless membership lapsed since epoch was planned. It returns next, shortened to the earliest
// engage retry that is not due yet.
func (c *Coordinator) engageOwned(epoch uint64, next time.Duration) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if c.epoch != epoch || !c.isFreshLocked(now) || c.stopping {
		return next
	}
	for name, st := range c.clusters {
		if !st.held || !st.tracked || !c.ownsLocked(name) || (st.eng != nil && st.eng.cl == st.cl) {
			continue
		}
		if now.Before(st.retryAt) {
			next = min(next, st.retryAt.Sub(now))
			continue
		}
		e := &engagement{cl: st.cl, replaces: st.eng}
		e.ctx, e.cancel = context.WithCancel(st.provCtx)
		st.eng = e
		go c.engage(name, st, e)
	}
	return next
}

// ownsLocked tells whether this replica owns the cluster among the current peers.
func (c *Coordinator) ownsLocked(name multicluster.ClusterName) bool {
	owner, ok := Owner(name, c.peers)
	return ok && owner.ID == c.opts.Identity
}

// engage engages the target with a cluster whose Lease this replica holds. The target is never
// called with c.mu held: it may take its time, and it may call back into the manager.
func (c *Coordinator) engage(name multicluster.ClusterName, st *clusterState, e *engagement) {
	err := c.target.Engage(e.ctx, name, e.cl)
	c.mu.Lock()
	current := st.eng == e && c.clusters[name] == st
	if err != nil {
		if current {
			e.end()
			st.eng = nil
			st.failures++
			backoff := min(c.opts.RetryPeriod<<min(st.failures-1, 16), maxEngageBackoff)
			st.retryAt = time.Now().Add(backoff)
		}
		c.mu.Unlock()
		if e.ctx.Err() == nil || current {
			c.log.Error(err, "Cannot engage an owned cluster; will retry", "cluster", string(name))
		}
		return
	}
	if !current || e.ctx.Err() != nil {
		c.mu.Unlock()
		return
	}
	e.engaged = true
	st.failures = 0
	if e.replaces != nil {
		e.replaces.end()
		e.replaces = nil
	}
	c.reportOwnedLocked()
	c.mu.Unlock()
	c.log.Info("Engaged an owned cluster", "cluster", string(name))
}

// end ends the engagement and the older one it was about to replace.
func (e *engagement) end() {
	e.cancel()
	if e.replaces != nil {
		e.replaces.end()
		e.replaces = nil
	}
}

// listFences returns the group's cluster Leases by name.
func (c *Coordinator) listFences(ctx context.Context) (map[string]*coordinationv1.Lease, error) {
	list, err := c.leases.List(ctx, metav1.ListOptions{LabelSelector: c.selector(RoleCluster)})
	if err != nil {
		return nil, fmt.Errorf("listing cluster Leases: %w", err)
	}
	fences := make(map[string]*coordinationv1.Lease, len(list.Items))
	for i := range list.Items {
		fences[list.Items[i].Name] = &list.Items[i]
	}
	return fences, nil
}

// checkFences verifies that the Leases this replica holds still name it, disengaging any that
// does not (only someone editing Leases by hand causes that), and deletes Leases of clusters
// this replica does not know whose holder is gone or that are free.
func (c *Coordinator) checkFences(ctx context.Context, fences map[string]*coordinationv1.Lease, now time.Time) {
	c.members.lastFenceCheck = now
	c.mu.Lock()
	tracked := map[multicluster.ClusterName]bool{}
	lost := 0
	for name, st := range c.clusters {
		if st.tracked {
			tracked[name] = true
		}
		if !st.held {
			continue
		}
		l := fences[ClusterLeaseName(c.opts.Group, name)]
		if l != nil && ptr.Deref(l.Spec.HolderIdentity, "") == c.opts.Identity {
			continue
		}
		lost++
		if st.eng != nil {
			st.eng.end()
			st.eng = nil
		}
		st.held, st.fence = false, nil
		c.log.Error(nil, "The Lease of an owned cluster was changed by someone else; disengaged it", "cluster", string(name))
	}
	c.reportOwnedLocked()
	c.mu.Unlock()
	metrics.ShardingOwnershipChanges.WithLabelValues(metrics.OwnershipLost).Add(float64(lost))

	for _, l := range fences {
		if tracked[multicluster.ClusterName(l.Annotations[AnnotationCluster])] {
			continue
		}
		holder := ptr.Deref(l.Spec.HolderIdentity, "")
		if holder == "" || holder == c.opts.Identity || c.members.holderGone(holder, now, c.opts.LeaseDuration) {
			c.deleteLease(ctx, l, "Deleted the Lease of a cluster no replica holds", "cluster", l.Annotations[AnnotationCluster])
		}
	}
}

// acquireFence takes the Lease of a cluster this replica owns. existing is the Lease as listed
// (nil when absent). It returns the Lease as written, or nil and the holder when the cluster
// is still held by a live replica (or the write lost a race): the caller tries again later.
func (c *Coordinator) acquireFence(ctx context.Context, name multicluster.ClusterName, existing *coordinationv1.Lease, now time.Time) (*coordinationv1.Lease, string, error) {
	if existing == nil {
		created, err := c.leases.Create(ctx, c.fenceLease(&coordinationv1.Lease{}, name, true), metav1.CreateOptions{})
		metrics.ShardingLeaseWrites.WithLabelValues(RoleCluster).Inc()
		if apierrors.IsAlreadyExists(err) {
			return nil, "", nil
		}
		if err != nil {
			return nil, "", fmt.Errorf("creating cluster Lease: %w", err)
		}
		return created, "", nil
	}
	if got := existing.Annotations[AnnotationCluster]; got != string(name) {
		return nil, "", fmt.Errorf("cluster Lease %s belongs to cluster %q: the names collide; rename one of the clusters", existing.Name, got)
	}
	holder := ptr.Deref(existing.Spec.HolderIdentity, "")
	if holder != "" && holder != c.opts.Identity {
		if !c.members.holderGone(holder, now, c.opts.LeaseDuration) {
			return nil, holder, nil
		}
		c.log.Info("Taking over a cluster from a replica that is gone", "cluster", string(name), "previousOwner", holder)
	}
	updated, err := c.leases.Update(ctx, c.fenceLease(existing.DeepCopy(), name, holder != c.opts.Identity), metav1.UpdateOptions{})
	metrics.ShardingLeaseWrites.WithLabelValues(RoleCluster).Inc()
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return nil, holder, nil
	}
	if err != nil {
		return nil, holder, fmt.Errorf("updating cluster Lease %s: %w", existing.Name, err)
	}
	return updated, holder, nil
}

// fenceLease fills l as the Lease of cluster name held by this replica. It has no duration of
// its own: it is valid exactly as long as the holder's membership Lease, which renews all of a
// replica's cluster Leases at once.
func (c *Coordinator) fenceLease(l *coordinationv1.Lease, name multicluster.ClusterName, newHolder bool) *coordinationv1.Lease {
	l.Name, l.Namespace = ClusterLeaseName(c.opts.Group, name), c.opts.Namespace
	if l.Labels == nil {
		l.Labels = map[string]string{}
	}
	l.Labels[LabelGroup], l.Labels[LabelRole] = c.groupLabel, RoleCluster
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	l.Annotations[AnnotationCluster] = string(name)
	now := metav1.NowMicro()
	l.Spec.HolderIdentity = ptr.To(c.opts.Identity)
	l.Spec.LeaseDurationSeconds = nil
	l.Spec.RenewTime = &now
	if newHolder {
		l.Spec.AcquireTime = &now
		if l.ResourceVersion != "" {
			l.Spec.LeaseTransitions = ptr.To(ptr.Deref(l.Spec.LeaseTransitions, 0) + 1)
		}
	}
	return l
}

// releaseFence deletes the Lease this replica holds for a cluster, on condition that it is the
// version we wrote.
func (c *Coordinator) releaseFence(ctx context.Context, name multicluster.ClusterName, fence *coordinationv1.Lease) error {
	leaseName := ClusterLeaseName(c.opts.Group, name)
	for range 3 {
		if fence == nil {
			current, err := c.leases.Get(ctx, leaseName, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("reading cluster Lease %s: %w", leaseName, err)
			}
			if ptr.Deref(current.Spec.HolderIdentity, "") != c.opts.Identity {
				return nil // not ours (any more): nothing to release
			}
			fence = current
		}
		err := c.leases.Delete(ctx, leaseName, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{
			UID: ptr.To(fence.UID), ResourceVersion: ptr.To(fence.ResourceVersion),
		}})
		metrics.ShardingLeaseWrites.WithLabelValues(RoleCluster).Inc()
		switch {
		case err == nil || apierrors.IsNotFound(err):
			return nil
		case apierrors.IsConflict(err):
			fence = nil // read it again
		default:
			return fmt.Errorf("deleting cluster Lease %s: %w", leaseName, err)
		}
	}
	return fmt.Errorf("cluster Lease %s keeps changing", leaseName)
}

// shutdown disengages every cluster, releases their Leases and deletes the membership Lease,
// so that the other replicas take over at their next round instead of after LeaseDuration.
// When a release fails the membership Lease is left to expire: peers must not take a Lease
// over from a replica whose membership is gone until it would have expired.
func (c *Coordinator) shutdown() {
	c.mu.Lock()
	c.stopping = true
	c.epoch++
	c.freshUntil = time.Time{}
	if c.watchdog != nil {
		c.watchdog.Stop()
	}
	var held []release
	for name, st := range c.clusters {
		if st.stopWatch != nil {
			st.stopWatch()
		}
		if st.eng != nil {
			st.eng.end()
			st.eng = nil
		}
		if st.held {
			held = append(held, release{name: name, fence: st.fence})
		}
	}
	c.clusters = map[multicluster.ClusterName]*clusterState{}
	c.peers = nil
	c.reportOwnedLocked()
	member := c.member
	c.mu.Unlock()

	c.log.Info("Leaving the group", "releasing", len(held))
	ctx, cancel := context.WithTimeout(context.Background(), c.opts.LeaseDuration)
	defer cancel()
	var failed atomic.Int32
	parallel(held, leaseCallParallelism, func(r release) {
		if err := c.releaseFence(ctx, r.name, r.fence); err != nil {
			failed.Add(1)
			c.log.Error(err, "Cannot release the Lease of a cluster", "cluster", string(r.name))
			return
		}
		metrics.ShardingOwnershipChanges.WithLabelValues(metrics.OwnershipReleased).Inc()
	})
	if member == nil {
		return
	}
	if failed.Load() > 0 {
		c.log.Info("Leaving the membership Lease to expire, since some cluster Leases could not be released")
		return
	}
	c.deleteLease(ctx, member, "Deleted the membership Lease")
}

func peerIDs(peers []Peer) []string {
	ids := make([]string, len(peers))
	for i, p := range peers {
		ids[i] = p.ID
	}
	return ids
}
