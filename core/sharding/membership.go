// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package sharding

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	"mcr.dev/core/metrics"
)

// heartbeat renews the membership Lease every RenewInterval (RetryPeriod after a failure) until
// ctx ends. Each success extends the time this replica may keep its clusters engaged to the
// moment the renewal was sent plus RenewDeadline; a watchdog timer lapses the membership when
// that passes without another success, even while a request hangs.
func (c *Coordinator) heartbeat(ctx context.Context) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		sent := time.Now()
		if err := c.renew(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			c.log.Error(err, "Cannot renew the membership Lease", "retryIn", c.opts.RetryPeriod)
			timer.Reset(c.opts.RetryPeriod)
			continue
		}
		freshUntil := sent.Add(c.opts.RenewDeadline)
		c.mu.Lock()
		joined := !c.isFreshLocked(sent)
		if freshUntil.After(c.freshUntil) {
			c.freshUntil = freshUntil
		}
		if c.watchdog != nil {
			c.watchdog.Stop()
		}
		c.watchdog = time.AfterFunc(time.Until(freshUntil), c.lapseIfExpired)
		c.mu.Unlock()
		if joined {
			c.log.Info("Membership is current; taking part in sharding")
			c.kick()
		}
		timer.Reset(c.opts.RenewInterval)
	}
}

// lapseIfExpired lapses the membership when its last renewal is older than RenewDeadline.
func (c *Coordinator) lapseIfExpired() {
	c.mu.Lock()
	expired := !c.freshUntil.IsZero() && !c.isFreshLocked(time.Now())
	c.mu.Unlock()
	if expired {
		c.lapse(fmt.Sprintf("membership Lease not renewed for %v", c.opts.RenewDeadline))
	}
}

// renew writes the membership Lease. It updates the Lease as last written, conditionally; when
// that fails because someone else wrote it (a peer that declared this replica expired), it
// lapses the membership first if it is still current and then writes the Lease again.
func (c *Coordinator) renew(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.opts.RenewDeadline)
	defer cancel()
	c.mu.Lock()
	last := c.member
	c.mu.Unlock()

	if last != nil {
		updated, err := c.leases.Update(ctx, c.memberLease(last.DeepCopy()), metav1.UpdateOptions{})
		metrics.ShardingLeaseWrites.WithLabelValues(RoleMember).Inc()
		if err == nil {
			c.storeMember(updated)
			return nil
		}
		if !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			return fmt.Errorf("updating membership Lease %s/%s: %w", c.opts.Namespace, c.memberName, err)
		}
	}
	current, err := c.leases.Get(ctx, c.memberName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		fresh := c.memberLease(&coordinationv1.Lease{})
		fresh.Spec.AcquireTime = fresh.Spec.RenewTime
		created, err := c.leases.Create(ctx, fresh, metav1.CreateOptions{})
		metrics.ShardingLeaseWrites.WithLabelValues(RoleMember).Inc()
		if err != nil {
			return fmt.Errorf("creating membership Lease %s/%s: %w", c.opts.Namespace, c.memberName, err)
		}
		if last != nil {
			c.lapseIfCurrent("membership Lease was deleted by someone else")
		}
		c.storeMember(created)
		return nil
	case err != nil:
		return fmt.Errorf("reading membership Lease %s/%s: %w", c.opts.Namespace, c.memberName, err)
	}
	if last != nil && ptr.Deref(current.Spec.HolderIdentity, "") != c.opts.Identity {
		// Not a renewal of ours that committed after its request failed: a peer wrote it.
		c.lapseIfCurrent("membership Lease was declared expired by a peer")
	}
	updated, err := c.leases.Update(ctx, c.memberLease(current), metav1.UpdateOptions{})
	metrics.ShardingLeaseWrites.WithLabelValues(RoleMember).Inc()
	if err != nil {
		return fmt.Errorf("updating membership Lease %s/%s: %w", c.opts.Namespace, c.memberName, err)
	}
	c.storeMember(updated)
	return nil
}

// lapseIfCurrent lapses a membership that is still current. A peer only writes our Lease once
// it has seen it unchanged for LeaseDuration, by which time we should have lapsed on our own;
// if a stalled process has not, it must stop now.
func (c *Coordinator) lapseIfCurrent(reason string) {
	c.mu.Lock()
	current := c.isFreshLocked(time.Now())
	c.mu.Unlock()
	if current {
		c.lapse(reason)
	}
}

func (c *Coordinator) storeMember(l *coordinationv1.Lease) {
	c.mu.Lock()
	c.member = l
	c.mu.Unlock()
}

// memberLease fills l as this replica's membership Lease, renewed now.
func (c *Coordinator) memberLease(l *coordinationv1.Lease) *coordinationv1.Lease {
	l.Name, l.Namespace = c.memberName, c.opts.Namespace
	if l.Labels == nil {
		l.Labels = map[string]string{}
	}
	l.Labels[LabelGroup], l.Labels[LabelRole] = c.groupLabel, RoleMember
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	l.Annotations[AnnotationIdentity] = c.opts.Identity
	l.Annotations[AnnotationWeight] = strconv.FormatFloat(c.opts.Weight, 'g', -1, 64)
	now := metav1.NowMicro()
	l.Spec.HolderIdentity = ptr.To(c.opts.Identity)
	l.Spec.LeaseDurationSeconds = ptr.To(int32(math.Ceil(c.opts.LeaseDuration.Seconds())))
	l.Spec.RenewTime = &now
	return l
}

// selector selects the group's Leases of one role.
func (c *Coordinator) selector(role string) string {
	return labels.SelectorFromSet(labels.Set{LabelGroup: c.groupLabel, LabelRole: role}).String()
}

// memberState is what this replica concluded about a member from its Lease.
type memberState int

const (
	memberLive memberState = iota + 1
	// memberExpired: its Lease was declared expired (by us or a peer); it has disengaged
	// everything and its cluster Leases may be taken over.
	memberExpired
)

// observation is the first time this replica saw a Lease at a resourceVersion. Liveness is
// judged by how long a Lease has gone unchanged on this replica's own monotonic clock, never
// by the times written in it, so clock offsets between replicas do not matter.
type observation struct {
	resourceVersion string
	since           time.Time
}

// memberView is this replica's view of the group's members.
type memberView struct {
	observed       map[string]observation // by Lease name
	lastFenceCheck time.Time

	mu          sync.Mutex
	states      map[string]memberState // by identity, from the last listing
	absentSince map[string]time.Time   // identities named by cluster Leases but without a member Lease
}

func newMemberView() *memberView {
	return &memberView{
		observed:    map[string]observation{},
		states:      map[string]memberState{},
		absentSince: map[string]time.Time{},
	}
}

// holderGone tells whether the replica named by a cluster Lease can no longer be engaged with
// it: its membership was declared expired, or it has had no membership Lease for a whole
// LeaseDuration (a deleted Lease is given that long, in case it is recreated).
func (v *memberView) holderGone(identity string, now time.Time, leaseDuration time.Duration) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	switch v.states[identity] {
	case memberLive:
		return false
	case memberExpired:
		return true
	}
	since, ok := v.absentSince[identity]
	if !ok {
		v.absentSince[identity] = now
		return false
	}
	return now.Sub(since) >= leaseDuration
}

// refreshMembers lists the group's membership Leases, declares expired those unchanged for a
// LeaseDuration, deletes Leases that have been expired for another LeaseDuration, and returns
// the live peers other than this replica, and how soon the first of them would expire if it
// stays silent (so that the next round can be scheduled for then).
func (c *Coordinator) refreshMembers(ctx context.Context, now time.Time) ([]Peer, time.Duration, error) {
	list, err := c.leases.List(ctx, metav1.ListOptions{LabelSelector: c.selector(RoleMember)})
	if err != nil {
		return nil, 0, fmt.Errorf("listing membership Leases: %w", err)
	}
	nextExpiry := c.opts.LeaseDuration
	v := c.members
	states := map[string]memberState{}
	seen := map[string]bool{}
	var peers []Peer
	for i := range list.Items {
		l := &list.Items[i]
		id := l.Annotations[AnnotationIdentity]
		if id == "" {
			continue
		}
		seen[l.Name] = true
		obs, ok := v.observed[l.Name]
		if !ok || obs.resourceVersion != l.ResourceVersion {
			obs = observation{resourceVersion: l.ResourceVersion, since: now}
			v.observed[l.Name] = obs
		}
		if id == c.opts.Identity {
			continue // our own liveness is our renewals', not this listing's
		}
		unchanged := now.Sub(obs.since)
		switch {
		case ptr.Deref(l.Spec.HolderIdentity, "") == "":
			states[id] = memberExpired
			if unchanged >= c.opts.LeaseDuration {
				c.deleteLease(ctx, l, "Deleted the membership Lease of a replica that left", "peer", id)
			}
		case unchanged >= c.opts.LeaseDuration:
			if c.declareExpired(ctx, l, id) {
				states[id] = memberExpired
			} else {
				states[id] = memberLive // it renewed meanwhile, or we cannot tell: assume alive
				peers = append(peers, peerOf(l, id))
			}
		default:
			states[id] = memberLive
			peers = append(peers, peerOf(l, id))
			nextExpiry = min(nextExpiry, c.opts.LeaseDuration-unchanged)
		}
	}
	for name := range v.observed {
		if !seen[name] {
			delete(v.observed, name)
		}
	}
	v.mu.Lock()
	v.states = states
	for id := range v.absentSince {
		if _, present := states[id]; present {
			delete(v.absentSince, id)
		}
	}
	v.mu.Unlock()
	return peers, nextExpiry, nil
}

// declareExpired clears the holder of a silent peer's membership Lease, conditionally on the
// version we saw. Success proves the peer has not renewed since: it has disengaged everything
// (its RenewDeadline passed long ago) and any renewal it still sends will fail. Only then may its
// cluster Leases be taken over. Writing the same object the peer renews is what makes this
// safe: a renewal and a declaration cannot both succeed.
func (c *Coordinator) declareExpired(ctx context.Context, l *coordinationv1.Lease, id string) bool {
	expired := l.DeepCopy()
	expired.Spec.HolderIdentity = nil
	updated, err := c.leases.Update(ctx, expired, metav1.UpdateOptions{})
	metrics.ShardingLeaseWrites.WithLabelValues(RoleMember).Inc()
	if apierrors.IsConflict(err) {
		// Either it renewed, or another peer declared it expired first.
		current, getErr := c.leases.Get(ctx, l.Name, metav1.GetOptions{})
		return getErr == nil && ptr.Deref(current.Spec.HolderIdentity, "") == ""
	}
	if err != nil {
		if !apierrors.IsNotFound(err) {
			c.log.Error(err, "Cannot declare a silent replica expired", "peer", id)
		}
		return false
	}
	c.members.observed[updated.Name] = observation{resourceVersion: updated.ResourceVersion, since: time.Now()}
	c.log.Info("Declared a silent replica expired; its clusters move to the others", "peer", id, "silentFor", c.opts.LeaseDuration)
	return true
}

// deleteLease deletes l if it is unchanged since it was read.
func (c *Coordinator) deleteLease(ctx context.Context, l *coordinationv1.Lease, msg string, kv ...any) {
	err := c.leases.Delete(ctx, l.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{
		UID: ptr.To(l.UID), ResourceVersion: ptr.To(l.ResourceVersion),
	}})
	metrics.ShardingLeaseWrites.WithLabelValues(l.Labels[LabelRole]).Inc()
	switch {
	case err == nil:
		c.log.V(1).Info(msg, append(kv, "lease", l.Name)...)
	case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
	default:
		c.log.Error(err, "Cannot delete a stale Lease", append(kv, "lease", l.Name)...)
	}
}

func peerOf(l *coordinationv1.Lease, id string) Peer {
	w, err := strconv.ParseFloat(l.Annotations[AnnotationWeight], 64)
	if err != nil {
		w = 1
	}
	return Peer{ID: id, Weight: w}
}
