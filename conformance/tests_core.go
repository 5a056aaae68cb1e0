// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/multicluster"
)

func testEngageOnAdd(s *spec) {
	in := s.start()
	for _, hint := range []string{"add-a", "add-b"} {
		m := s.create(hint)
		e := s.waitEngaged(in, m)
		s.expectReaches(in, e, m)
		if n := in.probe.instances(m.Name); n != 1 {
			s.failf("member %q was engaged with %d different cluster instances, want exactly one: %s", m.ID, n, in.probe.describe(m.Name))
		}
	}
}

func testEngagePreexisting(s *spec) {
	a, b := s.create("pre-a"), s.create("pre-b")
	in := s.start()
	for _, m := range []Member{a, b} {
		e := s.waitEngaged(in, m)
		s.expectReaches(in, e, m)
	}
}

func testGetReturnsEngaged(s *spec) {
	in := s.start()
	m := s.create("get")
	e := s.waitEngaged(in, m)
	s.expectGetReturns(in, e, m, "once it was engaged")
}

func testEngageContextLifetime(s *spec) {
	in := s.start()
	a := s.create("life-a")
	ea := s.waitEngaged(in, a)
	// Activity on another member: a provider that engages with a reconcile-scoped context
	// ends a's context here at the latest.
	b := s.create("life-b")
	s.waitEngaged(in, b)
	s.delete(b)
	s.consistently(func() error {
		if !ea.live() {
			return fmt.Errorf("the engage context of %q ended (cause: %v) although the member still exists", a.Name, context.Cause(ea.ctx))
		}
		return nil
	}, "the engage context of %q must stay alive", a.Name)
}

func testNoReengageOnUpdate(s *spec) {
	in := s.start()
	m := s.create("upd")
	e := s.waitEngaged(in, m)
	s.expectReaches(in, e, m)
	mark := in.probe.mark()
	for range 3 {
		s.update(m)
	}
	s.consistently(func() error {
		// Engaging the same instance again is a no-op by contract; a new instance is not.
		if x := in.probe.latest(m.Name, mark); x != nil && !sameCluster(x.cluster, e.cluster) {
			return fmt.Errorf("%q was engaged again with a new cluster after a no-op update: %s", m.Name, in.probe.describe(m.Name))
		}
		if !e.live() {
			return fmt.Errorf("the engage context of %q ended after a no-op update (cause: %v)", m.Name, context.Cause(e.ctx))
		}
		return nil
	}, "a no-op update of %q must not re-engage it", m.ID)
}

func testDisengageOnDelete(s *spec) {
	in := s.start()
	m := s.create("del")
	e := s.waitEngaged(in, m)
	s.delete(m)
	s.waitDone(e, s.opts.Timeouts.Disengage, "after its member was deleted")
	s.eventually(s.opts.Timeouts.Disengage, func() error { return checkNotFound(s.ctx, in, m.Name) },
		"Get(%q) must return ErrClusterNotFound after the member was deleted", m.Name)
	n := len(in.probe.of(m.Name))
	s.consistently(func() error {
		if got := len(in.probe.of(m.Name)); got > n {
			return fmt.Errorf("%q was engaged again after it was deleted: %s", m.Name, in.probe.describe(m.Name))
		}
		return checkNotFound(s.ctx, in, m.Name)
	}, "a deleted member must stay disengaged")
}

func testNotFoundForUnknown(s *spec) {
	unknown := multicluster.ClusterName(newMemberName("unknown"))
	in := s.newInstance()
	if err := checkNotFound(s.ctx, in, unknown); err != nil {
		s.failf("before Start: %v", err)
	}
	in.start()
	m := s.create("known")
	s.waitEngaged(in, m)
	for _, name := range []multicluster.ClusterName{unknown, m.Name + "-unknown", "conformance.unknown/" + m.Name} {
		if err := checkNotFound(s.ctx, in, name); err != nil {
			s.failf("after Start: %v", err)
		}
	}
}

func testIndexExistingClusters(s *spec) {
	in := s.start()
	a, b := s.create("idx-a"), s.create("idx-b")
	ea, eb := s.waitEngaged(in, a), s.waitEngaged(in, b)
	field := s.indexFieldName("existing")
	for _, m := range []Member{a, b} {
		s.writeObject(m, "idx-"+m.ID, map[string]string{"v": "value-" + m.ID})
	}
	if err := in.indexField(s.ctx, &corev1.ConfigMap{}, field, dataIndexer("v")); err != nil {
		s.failf("IndexField(%q) with two clusters engaged: %v", field, err)
	}
	s.expectIndexed(in, ea, a, field, "value-"+a.ID, "idx-"+a.ID)
	s.expectIndexed(in, eb, b, field, "value-"+b.ID, "idx-"+b.ID)
}

func testIndexFutureClusters(s *spec) {
	a := s.create("fut-a")
	in := s.newInstance()
	before := s.indexFieldName("before-start")
	if err := in.indexField(s.ctx, &corev1.ConfigMap{}, before, dataIndexer("v1")); err != nil {
		s.failf("IndexField(%q) before Start: %v", before, err)
	}
	in.start()
	ea := s.waitEngaged(in, a)
	b := s.create("fut-b")
	eb := s.waitEngaged(in, b)
	between := s.indexFieldName("between")
	if err := in.indexField(s.ctx, &corev1.ConfigMap{}, between, dataIndexer("v2")); err != nil {
		s.failf("IndexField(%q) between engagements: %v", between, err)
	}
	c := s.create("fut-c")
	ec := s.waitEngaged(in, c)
	for _, mc := range []struct {
		m Member
		e *engagement
	}{{a, ea}, {b, eb}, {c, ec}} {
		name := "fut-" + mc.m.ID
		s.writeObject(mc.m, name, map[string]string{"v1": "one-" + mc.m.ID, "v2": "two-" + mc.m.ID})
		s.expectIndexed(in, mc.e, mc.m, before, "one-"+mc.m.ID, name)
		s.expectIndexed(in, mc.e, mc.m, between, "two-"+mc.m.ID, name)
	}
}

func testIndexIsolation(s *spec) {
	in := s.start()
	a, b := s.create("iso-a"), s.create("iso-b")
	ea, eb := s.waitEngaged(in, a), s.waitEngaged(in, b)
	s.expectSeparate(a, b)
	field := s.indexFieldName("isolation")
	if err := in.indexField(s.ctx, &corev1.ConfigMap{}, field, dataIndexer("v")); err != nil {
		s.failf("IndexField(%q): %v", field, err)
	}
	shared := "shared-" + randomToken()
	for _, m := range []Member{a, b} {
		s.writeObject(m, "iso-"+m.ID, map[string]string{"v": shared})
	}
	// First wait until each cluster shows its own object, then check that neither shows the
	// other's: a cluster that sees every member's objects passes the first step only.
	pairs := []struct {
		m Member
		e *engagement
	}{{a, ea}, {b, eb}}
	for _, p := range pairs {
		s.eventuallyUnless(s.opts.Timeouts.Engage, anyBlocker(s.usingEngagement(in, p.e), s.slowerThanUsual("the indexed List")), func() error {
			got, err := s.listNames(p.e.cluster.GetCache(), p.m.ClusterNamespace, field, shared)
			if err != nil {
				return err
			}
			if !slices.Contains(got, "iso-"+p.m.ID) {
				return fmt.Errorf("the list on %q returned %q, which lacks its own object", p.m.Name, got)
			}
			return nil
		}, "the cluster %q must list its own object by the index", p.m.Name)
	}
	for _, p := range pairs {
		got, err := s.listNames(p.e.cluster.GetCache(), p.m.ClusterNamespace, field, shared)
		if err != nil {
			s.failf("List on %q: %v", p.m.Name, err)
		}
		if want := []string{"iso-" + p.m.ID}; !slices.Equal(got, want) {
			s.failf("a field-indexed List on %q returned %q, want only its own %q: objects of other clusters leak in", p.m.Name, got, want)
		}
	}
}

// expectSeparate makes the test errored if the harness gave a and b the same storage (the same
// namespace of the same apiserver): then no provider could keep their objects apart.
func (s *spec) expectSeparate(a, b Member) {
	ctx, cancel := s.harnessCtx()
	defer cancel()
	err := b.Client.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: markerName(a)}, &corev1.ConfigMap{})
	switch {
	case err == nil:
		s.erroredf("harness: members %q and %q share storage (the marker of %q is visible through the direct client of %q); give them different apiservers or namespaces", a.ID, b.ID, a.ID, b.ID)
	case !apierrors.IsNotFound(err):
		s.erroredf("reading through the direct client of %q: %v", b.ID, err)
	}
}

func testNameStability(s *spec) {
	a, b := s.create("name-a"), s.create("name-b")
	first := s.start()
	for _, m := range []Member{a, b} {
		s.expectReaches(first, s.waitEngaged(first, m), m)
	}
	if err := first.stop(); !isCleanStopError(err) {
		s.failf("stopping the first provider instance: %v", err)
	}
	second := s.start()
	for _, m := range []Member{a, b} {
		s.expectReaches(second, s.waitEngaged(second, m), m)
	}
}

func testConcurrentGet(s *spec) {
	in := s.start()
	var (
		names      atomic.Pointer[[]multicluster.ClusterName]
		found      atomic.Int64
		mu         sync.Mutex
		violations []string
		wg         sync.WaitGroup
	)
	unknown := multicluster.ClusterName(newMemberName("never"))
	// A first member proves that Start is running before the getters begin; Get before Start
	// is NotFoundForUnknown's business.
	first := s.create("churn")
	firstEng := s.waitEngaged(in, first)
	names.Store(&[]multicluster.ClusterName{unknown, first.Name})
	stop := make(chan struct{})
	for w := range 8 {
		wg.Go(func() {
			for i := w; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				list := *names.Load()
				name := list[i%len(list)]
				cl, err := in.get(s.ctx, name)
				switch {
				case err == nil && cl != nil:
					found.Add(1)
				case err == nil:
					mu.Lock()
					violations = append(violations, fmt.Sprintf("Get(%q) returned (nil, nil)", name))
					mu.Unlock()
				case !errors.Is(err, multicluster.ErrClusterNotFound):
					mu.Lock()
					violations = append(violations, fmt.Sprintf("Get(%q) returned %q, neither a cluster nor ErrClusterNotFound", name, err))
					mu.Unlock()
				}
			}
		})
	}
	stopped := false
	stopGetters := func() {
		if !stopped {
			stopped = true
			close(stop)
			wg.Wait()
		}
	}
	defer stopGetters()

	for round := range 2 {
		var members []Member
		for i := range 3 {
			m := s.create(fmt.Sprintf("churn%d-%d", round, i))
			members = append(members, m)
			list := append(slices.Clone(*names.Load()), m.Name)
			names.Store(&list)
		}
		var engs []*engagement
		for _, m := range members {
			engs = append(engs, s.waitEngaged(in, m))
		}
		for i, m := range members {
			s.delete(m)
			s.waitDone(engs[i], s.opts.Timeouts.Disengage, "after its member was deleted")
		}
	}
	stopGetters()
	if len(violations) > 0 {
		s.failf("%d Get calls during churn broke the contract, e.g. %s", len(violations), violations[0])
	}
	if found.Load() == 0 {
		s.failf("no concurrent Get ever returned an engaged cluster%s", s.causeOf(in, firstEng))
	}
}

func testCleanStop(s *spec) {
	in := s.start()
	a, b := s.create("stop-a"), s.create("stop-b")
	s.waitEngaged(in, a)
	s.waitEngaged(in, b)
	if err := in.stop(); !isCleanStopError(err) {
		s.failf("stopping the provider: %v", err)
	}
	s.eventually(s.opts.Timeouts.Stop, func() error {
		for _, e := range in.probe.snapshot() {
			if e.live() {
				return fmt.Errorf("the engage context of %s is still alive after Start returned", e)
			}
		}
		return nil
	}, "every engage context must be done once Start has returned")
}

func testNoGoroutineLeak(s *spec) {
	in := s.start()
	cycle := func(hint string) {
		m := s.create(hint)
		e := s.waitEngaged(in, m)
		// Use the cluster, so that informers and connections exist that must go away again.
		s.expectReaches(in, e, m)
		s.delete(m)
		s.waitDone(e, s.opts.Timeouts.Disengage, "after its member was deleted")
	}
	// A warm-up cycle creates what is shared and stays: connections, shared informers.
	cycle("leak-warm")
	baseline := settledGoroutines(s.ctx)
	for i := range s.opts.LeakCycles {
		cycle(fmt.Sprintf("leak%d", i))
	}
	limit := baseline + s.opts.LeakTolerance
	s.eventually(s.opts.Timeouts.Settle, func() error {
		if n := runtime.NumGoroutine(); n > limit {
			return fmt.Errorf("%d goroutines, %d before %d add/delete cycles (tolerance %d)", n, baseline, s.opts.LeakCycles, s.opts.LeakTolerance)
		}
		return nil
	}, "goroutines must come back to their number before the add/delete cycles")
}

// settledGoroutines returns the lowest goroutine count seen over a short window, so that
// goroutines that are just finishing do not inflate the baseline.
func settledGoroutines(ctx context.Context) int {
	low := runtime.NumGoroutine()
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(100 * time.Millisecond)
		low = min(low, runtime.NumGoroutine())
	}
	return low
}
