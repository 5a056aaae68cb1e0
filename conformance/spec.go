// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/multicluster"
)

// pollInterval is how often waits poll. Short, because waits end as soon as they succeed.
const pollInterval = 50 * time.Millisecond

// spec is the state of one test while it runs: the helpers test bodies are written with.
//
// Provider misbehavior ends a test through failf, eventually or consistently (failed); a
// harness or environment problem ends it through erroredf (errored). Test bodies call these
// only from their own goroutine.
type spec struct {
	ctx  context.Context
	opts Options
	h    Harness
	test Test
	logf func(string, ...any)

	// run is the run this test belongs to; it knows the root causes found by earlier tests.
	run *suiteRun

	cleanups []func() error
	members  []*trackedMember
	// readsUntil, when set, bounds reads through an engaged cluster, while a wait already knows
	// why they fail: the end of the wait's grace period.
	readsUntil time.Time
}

type trackedMember struct {
	m       Member
	token   string
	deleted bool
	// created is when the suite asked the harness to create the member.
	created time.Time
}

// erroredf ends the test as errored: the suite could not decide.
func (s *spec) erroredf(format string, args ...any) {
	panic(specError{msg: fmt.Sprintf(format, args...)})
}

// failf ends the test as failed: the provider broke the rule.
func (s *spec) failf(format string, args ...any) {
	panic(specFailure{msg: fmt.Sprintf(format, args...)})
}

// deferCleanup registers fn to run when the test ends, newest first.
func (s *spec) deferCleanup(fn func() error) { s.cleanups = append(s.cleanups, fn) }

func (s *spec) runCleanups() error {
	var errs []error
	for i := len(s.cleanups) - 1; i >= 0; i-- {
		func() {
			defer func() {
				if p := recover(); p != nil {
					errs = append(errs, fmt.Errorf("cleanup panicked: %v", p))
				}
			}()
			if err := s.cleanups[i](); err != nil {
				errs = append(errs, err)
			}
		}()
	}
	s.cleanups = nil
	return errors.Join(errs...)
}

// harnessCtx bounds one harness call.
func (s *spec) harnessCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(s.ctx, s.opts.Timeouts.Harness)
}

// eventually waits until fn returns nil. If it does not within timeout, the test fails with
// what (formatted with args) and fn's last error.
func (s *spec) eventually(timeout time.Duration, fn func() error, what string, args ...any) {
	s.eventuallyUnless(timeout, nil, fn, what, args...)
}

// blocker returns the root cause that keeps a wait from ever succeeding (a dead engage context,
// a Start that returned), or nil, and from when on the wait may fail because of it: causes
// that may still let the wait succeed (a cluster that only lost its engage context) get a
// grace period.
type blocker func() (failAt time.Time, cause error)

// eventuallyUnless is eventually, but it gives up early when blocked names a root cause and fn
// still fails after that cause's grace period: the test then fails at once with the cause,
// instead of waiting out its timeout and reporting only the symptom.
func (s *spec) eventuallyUnless(timeout time.Duration, blocked blocker, fn func() error, what string, args ...any) {
	deadline := time.Now().Add(timeout)
	for {
		if s.ctx.Err() != nil {
			s.failf("%s: interrupted (%v)", fmt.Sprintf(what, args...), context.Cause(s.ctx))
		}
		var cause error
		var failAt time.Time
		if blocked != nil {
			failAt, cause = blocked()
		}
		// Known to be blocked: reads need not wait much beyond the grace period.
		s.readsUntil = time.Time{}
		if cause != nil {
			s.readsUntil = failAt
		}
		last := fn()
		s.readsUntil = time.Time{}
		if last == nil {
			return
		}
		if cause != nil && !time.Now().Before(failAt) {
			if errors.Is(cause, errContextDied) {
				s.run.setDeadContextCause(cause)
			}
			s.failf("%s: %v; root cause: %v", fmt.Sprintf(what, args...), last, cause)
		}
		if time.Now().After(deadline) {
			s.failf("%s: %v (still so after %s)", fmt.Sprintf(what, args...), last, timeout)
		}
		select {
		case <-s.ctx.Done():
		case <-time.After(pollInterval):
		}
	}
}

// eventuallyHarness is eventually for a condition the harness must bring about: when it does
// not, the test is errored, not failed.
func (s *spec) eventuallyHarness(timeout time.Duration, fn func() error, what string, args ...any) {
	defer func() {
		if p := recover(); p != nil {
			if f, ok := p.(specFailure); ok {
				panic(specError(f))
			}
			panic(p)
		}
	}()
	s.eventually(timeout, fn, what, args...)
}

// wait polls cond until it holds or timeout passes, whichever is first; it fails nothing.
func (s *spec) wait(timeout time.Duration, cond func() bool) {
	deadline := time.Now().Add(timeout)
	for !cond() && time.Now().Before(deadline) && s.ctx.Err() == nil {
		select {
		case <-s.ctx.Done():
		case <-time.After(pollInterval):
		}
	}
}

// consistently checks that fn keeps returning nil for the Stable window; otherwise the test
// fails with what (formatted with args) and fn's error.
func (s *spec) consistently(fn func() error, what string, args ...any) {
	var last error
	poll := func() error {
		last = fn()
		return last
	}
	g := gomega.NewGomega(func(string, ...int) {
		panic(specFailure{msg: fmt.Sprintf("%s: %v", fmt.Sprintf(what, args...), last)})
	})
	g.Consistently(s.ctx, poll).WithTimeout(s.opts.Timeouts.Stable).WithPolling(pollInterval).Should(gomega.Succeed())
}

// create adds a member through the harness and writes its marker object through the member's
// direct client. The member is deleted again when the test ends, unless the test deleted it.
func (s *spec) create(hint string) Member {
	return s.createID(newMemberName(hint))
}

// createID is create with the member name chosen by the caller.
func (s *spec) createID(id string) Member {
	ctx, cancel := s.harnessCtx()
	defer cancel()
	created := time.Now()
	m, err := s.h.CreateMember(ctx, id)
	m = s.adopt(id, m, err)
	s.tracked(m).created = created
	return m
}

// tracked returns the suite's record of m, or an empty one.
func (s *spec) tracked(m Member) *trackedMember {
	for _, tm := range s.members {
		if tm.m.ID == m.ID {
			return tm
		}
	}
	return &trackedMember{}
}

// adopt finishes the creation of a member the harness returned for id: it checks the member,
// arranges its deletion at the end of the test and writes its marker.
func (s *spec) adopt(id string, m Member, err error) Member {
	ctx, cancel := s.harnessCtx()
	defer cancel()
	if err != nil {
		s.erroredf("harness: creating member %q: %v", id, err)
	}
	m = m.withDefaults(id)
	if m.Name == "" {
		s.erroredf("harness: CreateMember(%q) returned an empty cluster name (the name of the local cluster)", id)
	}
	if m.Client == nil {
		s.erroredf("harness: CreateMember(%q) returned no Client to reach the member directly", id)
	}
	tm := &trackedMember{m: m, token: randomToken()}
	s.members = append(s.members, tm)
	s.deferCleanup(func() error {
		if tm.deleted {
			return nil
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), s.opts.Timeouts.Harness)
		defer cancel()
		if err := s.h.DeleteMember(ctx, tm.m); err != nil {
			return fmt.Errorf("harness: deleting member %q: %w", tm.m.ID, err)
		}
		return nil
	})
	marker := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: markerName(m), Namespace: m.Namespace},
		Data:       map[string]string{"member": m.ID, "token": tm.token},
	}
	if err := m.Client.Create(ctx, marker); err != nil {
		s.erroredf("writing the marker ConfigMap %s/%s to member %q through its direct client: %v", m.Namespace, marker.Name, id, err)
	}
	s.logf("%s: created member %q (cluster name %q)", s.test.ID, id, m.Name)
	return m
}

// update makes a no-op change to the member through the harness.
func (s *spec) update(m Member) {
	ctx, cancel := s.harnessCtx()
	defer cancel()
	if err := s.h.UpdateMember(ctx, m); err != nil {
		s.erroredf("harness: updating member %q: %v", m.ID, err)
	}
}

// delete removes the member through the harness.
func (s *spec) delete(m Member) {
	ctx, cancel := s.harnessCtx()
	defer cancel()
	if err := s.h.DeleteMember(ctx, m); err != nil {
		s.erroredf("harness: deleting member %q: %v", m.ID, err)
	}
	for _, tm := range s.members {
		if tm.m.ID == m.ID {
			tm.deleted = true
		}
	}
	s.logf("%s: deleted member %q", s.test.ID, m.ID)
}

func (s *spec) token(m Member) string {
	for _, tm := range s.members {
		if tm.m.ID == m.ID {
			return tm.token
		}
	}
	return ""
}

func markerName(m Member) string { return "mcr-conformance-marker-" + m.ID }

func randomToken() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// checkReaches returns nil once reader shows m's marker object with the token written through
// m's direct client: proof that the reader talks to that member.
func (s *spec) checkReaches(reader client.Reader, m Member) error {
	ctx, cancel := context.WithTimeout(s.ctx, s.readTimeout())
	defer cancel()
	cm := &corev1.ConfigMap{}
	key := client.ObjectKey{Namespace: m.ClusterNamespace, Name: markerName(m)}
	if err := reader.Get(ctx, key, cm); err != nil {
		return fmt.Errorf("reading marker %s through the engaged cluster: %w", key, err)
	}
	if got, want := cm.Data["token"], s.token(m); got != want {
		return fmt.Errorf("marker %s through the engaged cluster has token %q, the member has %q: the cluster talks to another member", key, got, want)
	}
	return nil
}

// readTimeout bounds one read through an engaged cluster. The first read of a type starts an
// informer, which may take seconds to sync on a loaded machine; a wait that already knows the
// cluster is gone (readsUntil) does not wait that long.
func (s *spec) readTimeout() time.Duration {
	const full, short = 10 * time.Second, 5 * time.Second
	if s.readsUntil.IsZero() {
		return full
	}
	return min(full, max(short, time.Until(s.readsUntil)))
}

// expectReaches waits until the client of the engaged cluster shows m's marker.
func (s *spec) expectReaches(in *instance, e *engagement, m Member) {
	s.eventuallyUnless(s.opts.Timeouts.Engage, anyBlocker(s.usingEngagement(in, e), s.slowerThanUsual("reading the member's marker")),
		func() error { return s.checkReaches(e.cluster.GetClient(), m) },
		"the cluster engaged as %q must reach member %q", m.Name, m.ID)
}

// waitEngaged waits until the provider has engaged m and returns the newest engagement. It
// does not require the engage context to be alive: the tests of the context's lifetime check
// that, so that a provider that gets only the lifetime wrong fails only those.
func (s *spec) waitEngaged(in *instance, m Member) *engagement {
	return s.waitEngagedAfter(in, m, 0)
}

// waitEngagedAfter waits for an engagement of m newer than the probe's mark after.
func (s *spec) waitEngagedAfter(in *instance, m Member, after int) *engagement {
	var e *engagement
	defer s.noteNoEngage(in, m)
	defer func() {
		if created := s.tracked(m).created; after == 0 && e != nil && !created.IsZero() {
			s.run.noteEngageLatency(e.at.Sub(created))
		}
	}()
	s.eventuallyUnless(s.opts.Timeouts.Engage, anyBlocker(s.waitingForEngage(in), s.slowerThanUsual("the engagement")), func() error {
		if v := in.probe.violationList(); len(v) > 0 {
			return fmt.Errorf("contract violations: %v", v)
		}
		e = in.probe.latest(m.Name, after)
		if e == nil {
			return fmt.Errorf("not engaged: %s; %s", in.probe.describe(m.Name), in.startState())
		}
		return nil
	}, "member %q must be engaged as %q", m.ID, m.Name)
	return e
}

// waitDone waits until the engagement's context has ended.
func (s *spec) waitDone(e *engagement, timeout time.Duration, why string) {
	s.eventuallyUnless(timeout, s.slowerThanUsual("the end of the engage context"), func() error {
		if e.live() {
			return fmt.Errorf("the engage context of %s is still alive", e)
		}
		return nil
	}, "the engage context of %q must end %s", e.name, why)
}

// checkNotFound returns nil if Get(name) returns an error wrapping ErrClusterNotFound.
func checkNotFound(ctx context.Context, in *instance, name multicluster.ClusterName) error {
	cl, err := in.get(ctx, name)
	switch {
	case err == nil && cl == nil:
		return fmt.Errorf("Get(%q) returned (nil, nil); the contract requires an error wrapping ErrClusterNotFound", name)
	case err == nil:
		return fmt.Errorf("Get(%q) returned a cluster (%T %p), want ErrClusterNotFound", name, cl, cl)
	case !errors.Is(err, multicluster.ErrClusterNotFound):
		return fmt.Errorf("Get(%q) returned %q, which does not wrap ErrClusterNotFound", name, err)
	}
	return nil
}

// listNames lists the ConfigMaps of namespace that match field=value through reader, sorted.
func (s *spec) listNames(reader client.Reader, namespace, field, value string) ([]string, error) {
	ctx, cancel := context.WithTimeout(s.ctx, s.readTimeout())
	defer cancel()
	list := &corev1.ConfigMapList{}
	if err := reader.List(ctx, list, client.InNamespace(namespace), client.MatchingFields{field: value}); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(list.Items))
	for _, cm := range list.Items {
		names = append(names, cm.Name)
	}
	slices.Sort(names)
	return names, nil
}

// writeObject creates a ConfigMap with data in m through its direct client; it is deleted when
// the test ends.
func (s *spec) writeObject(m Member, name string, data map[string]string) {
	ctx, cancel := s.harnessCtx()
	defer cancel()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: m.Namespace}, Data: data}
	if err := m.Client.Create(ctx, cm); err != nil {
		s.erroredf("writing ConfigMap %s/%s to member %q: %v", m.Namespace, name, m.ID, err)
	}
	s.deferCleanup(func() error {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), s.opts.Timeouts.Harness)
		defer cancel()
		err := m.Client.Delete(ctx, cm)
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
}

// expectIndexed waits until a field-indexed List through the engaged cluster returns exactly
// want.
func (s *spec) expectIndexed(in *instance, e *engagement, m Member, field, value string, want ...string) {
	want = slices.Sorted(slices.Values(want))
	s.eventuallyUnless(s.opts.Timeouts.Engage, anyBlocker(s.usingEngagement(in, e), s.slowerThanUsual("the indexed List")), func() error {
		got, err := s.listNames(e.cluster.GetCache(), m.ClusterNamespace, field, value)
		if err != nil {
			return fmt.Errorf("listing with MatchingFields{%q: %q}: %w", field, value, err)
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("listing with MatchingFields{%q: %q} returned %q, want %q", field, value, got, want)
		}
		return nil
	}, "the index %q must work on the cluster %q", field, m.Name)
}

// dataIndexer returns an extractor indexing a ConfigMap by one of its data keys.
func dataIndexer(key string) client.IndexerFunc {
	return func(obj client.Object) []string {
		cm, ok := obj.(*corev1.ConfigMap)
		if !ok {
			return nil
		}
		if v, ok := cm.Data[key]; ok {
			return []string{v}
		}
		return nil
	}
}

// indexField names are unique per test, so that providers sharing a cache between tests (a
// host cluster reused by the harness) never see the same index twice from the suite.
func (s *spec) indexFieldName(short string) string {
	return fmt.Sprintf("conformance.mcr.dev/%s-%d", short, nameSeq.Add(1))
}

// readContext bounds one read through an engaged cluster (see readTimeout).
func (s *spec) readContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(s.ctx, s.readTimeout())
}

// expectGetReturns waits until Get(m.Name) returns the cluster of e; when says when it must.
// A Get that keeps returning another cluster instance for the Stable window fails then, not
// after the timeout: the engaged instance is there to be returned, so another one is the wrong
// answer, not a delay.
func (s *spec) expectGetReturns(in *instance, e *engagement, m Member, when string) {
	var otherSince time.Time
	using := s.usingEngagement(in, e)
	blocked := func() (time.Time, error) {
		if at, cause := using(); cause != nil {
			return at, cause
		}
		if otherSince.IsZero() {
			return time.Time{}, nil
		}
		return otherSince.Add(s.opts.Timeouts.Stable), fmt.Errorf("Get(%q) has kept returning another cluster instance than the engaged one "+
			"(for %s)", m.Name, time.Since(otherSince).Round(time.Millisecond))
	}
	s.eventuallyUnless(s.opts.Timeouts.Engage, blocked, func() error {
		cl, err := in.get(s.ctx, m.Name)
		if err == nil && cl != nil && !sameCluster(cl, e.cluster) {
			if otherSince.IsZero() {
				otherSince = time.Now()
			}
			return fmt.Errorf("Get(%q) returned %T %p, but %T %p was engaged", m.Name, cl, cl, e.cluster, e.cluster)
		}
		otherSince = time.Time{}
		switch {
		case err != nil:
			return fmt.Errorf("Get(%q): %w", m.Name, err)
		case cl == nil:
			return fmt.Errorf("Get(%q) returned (nil, nil)", m.Name)
		}
		return nil
	}, "Get(%q) must return the engaged cluster %s", m.Name, when)
}
