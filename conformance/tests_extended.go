// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/multicluster"
)

func testReengageOnCredentialRotation(s *spec) {
	rotator := s.rotator()
	in := s.start()
	m := s.create("rot")
	old := s.waitEngaged(in, m)
	s.expectReaches(in, old, m)
	s.rotate(in, old, m, rotator, "the rotation", s.slowerThanUsual("the engagement after the rotation"))
}

func (s *spec) rotator() CredentialRotator {
	rotator, ok := s.h.(CredentialRotator)
	if !ok {
		s.erroredf("the provider claims %s, but the harness (%T) does not implement CredentialRotator", CredentialRotation, s.h)
	}
	return rotator
}

// rotate rotates the credentials of m, which cur serves, revokes the old ones and returns the
// engagement that serves m afterwards. A provider may meet a rotation in two ways: engage a new
// cluster with the new credentials and end cur, or keep cur and switch it to them in place,
// which one that claims InPlaceCredentialRefresh must do (refreshedInPlace). Either way the
// member must work after the revocation. A new engagement usually shows within moments; when
// none has shown within the Stable window, the old credentials are revoked, and then either one
// shows or cur must work with live requests. blocked explains a slow new engagement. what names
// the rotation in messages.
func (s *spec) rotate(in *instance, cur *engagement, m Member, rotator CredentialRotator, what string, blocked blocker) *engagement {
	ctx, cancel := s.harnessCtx()
	revokeOld, err := rotator.RotateCredentials(ctx, m)
	cancel()
	if err != nil {
		s.erroredf("harness: %s: rotating the credentials of %q: %v", what, m.ID, err)
	}
	revoke := func() {
		ctx, cancel := s.harnessCtx()
		defer cancel()
		if err := revokeOld(ctx); err != nil {
			s.erroredf("harness: %s: revoking the old credentials of %q: %v", what, m.ID, err)
		}
	}
	if s.opts.claims(InPlaceCredentialRefresh) {
		s.refreshedInPlace(in, cur, m, revoke, what)
		return cur
	}
	var next *engagement
	replaced := func() bool {
		next = in.probe.latest(m.Name, cur.seq)
		return next != nil && !sameCluster(next.cluster, cur.cluster)
	}
	s.wait(s.opts.Timeouts.Stable, replaced)
	if !replaced() {
		revoke()
		s.eventuallyUnless(s.opts.Timeouts.Engage, blocked, func() error {
			if replaced() {
				return nil
			}
			if err := s.checkReaches(cur.cluster.GetAPIReader(), m); err != nil {
				return fmt.Errorf("no new cluster engaged (%s), and the engaged one fails: %w", in.probe.describe(m.Name), err)
			}
			return nil
		}, "%s: once the old credentials were revoked, %q must work, through a new cluster or, refreshed in place, through the engaged one", what, m.Name)
		if !replaced() {
			s.expectGetReturns(in, cur, m, what+", refreshed in place")
			return cur
		}
		s.waitDone(cur, s.opts.Timeouts.Disengage, "once a new cluster replaced it")
	} else {
		s.waitDone(cur, s.opts.Timeouts.Disengage, "once a new cluster replaced it")
		revoke()
		// The test only means something if the old credentials really stopped working: the
		// member refuses them, or the old cluster no longer produces them at all (a provider
		// that runs a credential plugin stops it with the instance). The member itself is up:
		// the new cluster must reach it next.
		s.eventuallyHarness(s.opts.Timeouts.Engage, func() error {
			err := s.checkReaches(cur.cluster.GetAPIReader(), m)
			if err == nil {
				return fmt.Errorf("the old credentials still work")
			}
			var answer apierrors.APIStatus
			if errors.As(err, &answer) && !apierrors.IsUnauthorized(err) && !apierrors.IsForbidden(err) {
				return fmt.Errorf("the old credentials fail with %v, want Unauthorized or Forbidden", err)
			}
			return nil
		}, "harness: revokeOld must make the old credentials of %q stop working", m.ID)
	}
	// Live requests (not the cache) prove that the new instance authenticates with the new
	// credentials.
	s.eventuallyUnless(s.opts.Timeouts.Engage, s.usingEngagement(in, next), func() error { return s.checkReaches(next.cluster.GetAPIReader(), m) },
		"%s: the new cluster of %q must work with the new credentials after the old ones were revoked", what, m.Name)
	return next
}

// refreshedInPlace checks a rotation of m's credentials, which cur serves, for a provider that
// claims InPlaceCredentialRefresh: revoke revokes the old ones at once, so from then on only
// credentials the provider switched cur to can reach the member. cur, and no new engagement,
// must reach it with live requests, see in its cache an object written afterwards (its watches
// stayed) and be what Get returns. what names the rotation in messages.
func (s *spec) refreshedInPlace(in *instance, cur *engagement, m Member, revoke func(), what string) {
	revoke()
	replaced := func() error {
		if next := in.probe.latest(m.Name, cur.seq); next != nil {
			return fmt.Errorf("%s: a new cluster was engaged as %q, but a provider that claims %s keeps the engagement when only the credentials change: %s",
				what, m.Name, InPlaceCredentialRefresh, in.probe.describe(m.Name))
		}
		return nil
	}
	kept := func() {
		if err := replaced(); err != nil {
			s.failf("%v", err)
		}
	}
	s.eventuallyUnless(s.opts.Timeouts.Engage, s.usingEngagement(in, cur), func() error {
		kept()
		return s.checkReaches(cur.cluster.GetAPIReader(), m)
	}, "%s: the cluster engaged as %q must reach its member with the new credentials once the old ones are revoked", what, m.Name)

	s.expectCacheSeesWrite(in, cur, m, fmt.Sprintf("refreshed-%s-%d", m.ID, nameSeq.Add(1)), s.usingEngagement(in, cur), kept,
		"%s: the cache of the cluster engaged as %q must keep seeing objects written to its member", what, m.Name)
	s.expectGetReturns(in, cur, m, what)
	s.consistently(replaced, "%s: the engagement of %q must stay", what, m.Name)
}

// expectCacheSeesWrite writes an object named name to m and waits until the cache of e shows
// it: only a cache that still watches the member does. check, if not nil, runs before each
// read; what (formatted with args) says what must hold.
func (s *spec) expectCacheSeesWrite(in *instance, e *engagement, m Member, name string, blocked blocker, check func(), what string, args ...any) {
	token := randomToken()
	s.writeObject(m, name, map[string]string{"token": token})
	key := client.ObjectKey{Namespace: m.ClusterNamespace, Name: name}
	s.eventuallyUnless(s.opts.Timeouts.Engage, blocked, func() error {
		if check != nil {
			check()
		}
		ctx, cancel := s.readContext()
		defer cancel()
		cm := &corev1.ConfigMap{}
		if err := e.cluster.GetClient().Get(ctx, key, cm); err != nil {
			return fmt.Errorf("reading %s through the engaged cluster: %w", key, err)
		}
		if cm.Data["token"] != token {
			return fmt.Errorf("%s through the engaged cluster has token %q, want %q", key, cm.Data["token"], token)
		}
		return nil
	}, what, args...)
}

func testReengageOnServerChange(s *spec) {
	mover, ok := s.h.(ServerMover)
	if !ok {
		s.erroredf("the provider claims %s, but the harness (%T) does not implement ServerMover", InPlaceCredentialRefresh, s.h)
	}
	in := s.start()
	m := s.create("moved")
	old := s.waitEngaged(in, m)
	s.expectReaches(in, old, m)
	ctx, cancel := s.harnessCtx()
	err := mover.MoveServer(ctx, m)
	cancel()
	if err != nil {
		s.erroredf("harness: moving the server of %q: %v", m.ID, err)
	}
	var next *engagement
	s.eventuallyUnless(s.opts.Timeouts.Engage, s.slowerThanUsual("the engagement after the server change"), func() error {
		next = in.probe.latest(m.Name, old.seq)
		if next == nil || sameCluster(next.cluster, old.cluster) {
			return fmt.Errorf("no new cluster instance engaged: %s", in.probe.describe(m.Name))
		}
		return nil
	}, "a new cluster must be engaged as %q after its server address changed, also by a provider that refreshes credentials in place", m.Name)
	s.waitDone(old, s.opts.Timeouts.Disengage, "once a new cluster replaced it")
	s.expectReaches(in, next, m)
	s.expectGetReturns(in, next, m, "after the server change")
}

func (s *spec) toggler() ReadinessToggler {
	t, ok := s.h.(ReadinessToggler)
	if !ok {
		s.erroredf("the provider claims %s, but the harness (%T) does not implement ReadinessToggler", MemberReadiness, s.h)
	}
	return t
}

func (s *spec) setReady(m Member, ready bool) {
	ctx, cancel := s.harnessCtx()
	defer cancel()
	if err := s.toggler().SetReady(ctx, m, ready); err != nil {
		s.erroredf("harness: SetReady(%q, %t): %v", m.ID, ready, err)
	}
}

// becomeUnready engages m, makes it unready and checks that it is disengaged for good.
func (s *spec) becomeUnready(in *instance, m Member) {
	e := s.waitEngaged(in, m)
	s.setReady(m, false)
	s.waitDone(e, s.opts.Timeouts.Disengage, "after its member became unready")
	s.eventually(s.opts.Timeouts.Disengage, func() error { return checkNotFound(s.ctx, in, m.Name) },
		"Get(%q) must return ErrClusterNotFound while the member is unready", m.Name)
	mark := in.probe.mark()
	s.consistently(func() error {
		if in.probe.active(m.Name) != nil || in.probe.latest(m.Name, mark) != nil {
			return fmt.Errorf("%q was engaged again while unready: %s", m.Name, in.probe.describe(m.Name))
		}
		return nil
	}, "an unready member must stay disengaged")
}

func testDisengageWhenUnready(s *spec) {
	s.toggler()
	in := s.start()
	m := s.create("unready")
	s.becomeUnready(in, m)
}

func testReengageWhenReady(s *spec) {
	s.toggler()
	in := s.start()
	m := s.create("ready")
	first := s.waitEngaged(in, m)
	s.setReady(m, false)
	s.waitDone(first, s.opts.Timeouts.Disengage, "after its member became unready")
	s.eventually(s.opts.Timeouts.Disengage, func() error { return checkNotFound(s.ctx, in, m.Name) },
		"Get(%q) must return ErrClusterNotFound while the member is unready", m.Name)
	mark := in.probe.mark()
	s.setReady(m, true)
	e := s.waitEngagedAfter(in, m, mark)
	s.expectReaches(in, e, m)
}

func testRetryAfterEngageError(s *spec) {
	in := s.start()
	// The member's cluster name is only known once CreateMember returns, and the provider may
	// engage before that; so the probe fails the first Engage of any name that contains the
	// member's name, which is how providers name clusters.
	id := newMemberName("retry")
	in.probe.failFirstEngage(func(name multicluster.ClusterName) bool { return strings.Contains(string(name), id) })
	m := s.createID(id)
	e := s.waitEngaged(in, m)
	s.expectReaches(in, e, m)
	var failed *engagement
	for _, x := range in.probe.of(m.Name) {
		if x.failed {
			failed = x
		}
	}
	if failed == nil {
		s.erroredf("the probe did not see a first Engage of %q to fail (it fails the first Engage of a name containing %q): %s", m.Name, id, in.probe.describe(m.Name))
	}
	s.waitDone(failed, s.opts.Timeouts.Disengage, "after Engage failed with it")
}

func testScaleEngageDisengage(s *spec) {
	in := s.start()
	n := s.opts.ScaleMembers
	members := createAll(s, "scale", n)
	engs := make([]*engagement, n)
	missing := n
	// A provider that stops engaging (a cap on members) fails once no member was engaged for
	// Timeouts.Engage, instead of waiting out the whole Timeouts.Scale.
	stalled := progressBlocker(s.stallWindow(), func() int { return n - missing }, "engaged")
	waiting := s.waitingForEngage(in)
	s.eventuallyUnless(s.opts.Timeouts.Scale, func() (time.Time, error) {
		if at, cause := waiting(); cause != nil {
			return at, cause
		}
		return stalled()
	}, func() error {
		missing = 0
		for i, m := range members {
			if engs[i] == nil {
				engs[i] = in.probe.latest(m.Name, 0)
			}
			if engs[i] == nil {
				missing++
			}
		}
		if missing > 0 {
			return fmt.Errorf("%d of %d members not engaged; %s", missing, n, in.startState())
		}
		return nil
	}, "all %d members must be engaged", n)
	for i, m := range members {
		if cl, err := in.get(s.ctx, m.Name); err != nil || !sameCluster(cl, engs[i].cluster) {
			s.failf("Get(%q) = %T %p, %v; want the engaged cluster%s", m.Name, cl, cl, err, s.causeOf(in, engs[i]))
		}
	}
	deleteAll(s, members)
	live := n
	stalled = progressBlocker(s.opts.Timeouts.Disengage, func() int { return n - live }, "disengaged")
	s.eventuallyUnless(s.opts.Timeouts.Scale, stalled, func() error {
		live = 0
		for _, e := range engs {
			if e.live() {
				live++
			}
		}
		if live > 0 {
			return fmt.Errorf("%d of %d engage contexts still alive", live, n)
		}
		return nil
	}, "all %d members must be disengaged after they were deleted", n)
	for _, m := range members {
		if err := checkNotFound(s.ctx, in, m.Name); err != nil {
			s.failf("after deleting all members: %v", err)
		}
	}
}

// progressBlocker is the blocker of a wait for many members: it names the cause once done()
// has not grown for window, which means the provider stopped (it does not just go slowly).
func progressBlocker(window time.Duration, done func() int, what string) blocker {
	last, since := -1, time.Time{}
	return func() (time.Time, error) {
		if d := done(); d != last {
			last, since = d, time.Now()
			return time.Time{}, nil
		}
		return since.Add(window), fmt.Errorf("no further member was %s for %s (%d were): the provider stopped; it must handle "+
			"every member, however many", what, window, last)
	}
}

// createAll creates n members through the harness, a few at a time.
func createAll(s *spec, hint string, n int) []Member {
	ctx, cancel := context.WithTimeout(s.ctx, s.opts.Timeouts.Scale)
	defer cancel()
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	ids := make([]string, n)
	created := make([]Member, n)
	errs := make([]error, n)
	for i := range n {
		ids[i] = newMemberName(hint)
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			created[i], errs[i] = s.h.CreateMember(ctx, ids[i])
		})
	}
	wg.Wait()
	members := make([]Member, n)
	for i := range n {
		members[i] = s.adopt(ids[i], created[i], errs[i])
	}
	return members
}

// deleteAll deletes members through the harness, a few at a time.
func deleteAll(s *spec, members []Member) {
	ctx, cancel := context.WithTimeout(s.ctx, s.opts.Timeouts.Scale)
	defer cancel()
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	errs := make([]error, len(members))
	for i, m := range members {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			errs[i] = s.h.DeleteMember(ctx, m)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			s.erroredf("harness: deleting member %q: %v", members[i].ID, err)
		}
	}
	for _, tm := range s.members {
		tm.deleted = true
	}
}
