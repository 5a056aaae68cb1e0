// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package faults

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	mcbuilder "mcr.dev/core/builder"
	"mcr.dev/core/internal/testcheck"
	"mcr.dev/core/multicluster"
	clustersprovider "mcr.dev/core/providers/clusters"
)

const (
	// outage is how long the member stays down: longer than cacheSyncTimeout, and long enough
	// for client-go's watch backoff to approach its cap (30 s, jittered up to 60 s).
	outage = 40 * time.Second
	// recoveryBound bounds how long after its return a member may take to reconcile what was
	// written to it then. It only catches a member that does not come back in a useful time;
	// the figure the test reports is what matters.
	recoveryBound = 60 * time.Second
	// churnInterval is the pace of each member's writer.
	churnInterval = 200 * time.Millisecond
)

// A member stopped while engaged and reconciling, for longer than the cache sync timeout, and
// then started again: the other members go on reconciling, the member's controller resumes,
// and every object created, changed or deleted in any member during and right after the outage
// is reconciled: none is lost. (The stopped member takes no writes while it is down; it gets
// creates, changes and deletes the moment it is back, before its watches have resumed.)
func TestEngagedMemberOutage(t *testing.T) {
	ns := uniqueName("outage")
	createNamespace(t, ns, "a", "b", "c")
	l := newLedger(ns)
	provider := clustersprovider.New(clustersprovider.Options{CacheSyncTimeout: cacheSyncTimeout, Logger: logr.Discard()})
	logs := &logLines{words: []string{"Member"}}
	mgr := newManager(t, provider, logs.logger())
	if err := mcbuilder.ControllerManagedBy(mgr).Named("outage-" + ns).For(&corev1.ConfigMap{}).Complete(l.reconciler(mgr)); err != nil {
		t.Fatal(err)
	}
	runManager(t, mgr)
	for _, m := range []string{"a", "b", "c"} {
		cl, err := cluster.New(fleet.Member(m).Config(), func(o *cluster.Options) { o.Logger = logr.Discard() })
		if err != nil {
			t.Fatal(err)
		}
		if err := provider.Add(t.Context(), multicluster.ClusterName(m), cl); err != nil {
			t.Fatal(err)
		}
	}

	ctx := t.Context()
	a, b, c := newWriter(t, l, "a"), newWriter(t, l, "b"), newWriter(t, l, "c")
	// Objects in c to change and delete once it is back.
	for range 20 {
		if err := c.create(ctx); err != nil {
			t.Fatal(err)
		}
	}
	churnCtx, stopChurn := context.WithCancel(ctx)
	defer stopChurn()
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	churn := func(w *writer) {
		wg.Go(func() {
			if err := w.churn(churnCtx, churnInterval); err != nil {
				errs <- err
			}
		})
	}
	churn(a)
	churn(b)

	// Before: every member reconciles.
	time.Sleep(10 * time.Second)
	if !testcheck.Within(time.Minute, func() bool { lost, _ := l.lost(everything); return len(lost) == 0 }) {
		lost, _ := l.lost(everything)
		t.Fatalf("before the outage, not reconciled: %s", firstLines(lost, 10))
	}

	member := fleet.Member("c")
	stopped := time.Now()
	if err := member.Stop(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(outage - time.Since(stopped))
	if err := member.Start(ctx); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	t.Logf("member c was down for %s", back.Sub(stopped).Round(time.Millisecond))

	// Right after its return: new objects, changes and deletes in c, then the same churn as
	// in the others for a while.
	for i := range 10 {
		if err := c.create(ctx); err != nil {
			t.Fatal(err)
		}
		if err := c.update(ctx, i); err != nil {
			t.Fatal(err)
		}
	}
	for range 5 {
		if err := c.remove(ctx); err != nil {
			t.Fatal(err)
		}
	}
	churn(c)
	time.Sleep(10 * time.Second)
	stopChurn()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	inC := func(cluster string, at time.Time) bool { return cluster == "c" && !at.Before(back) }
	reconciled := testcheck.Within(time.Until(back.Add(recoveryBound)), func() bool {
		lost, _ := l.lost(inC)
		return len(lost) == 0
	})
	// The others had as long as c to catch up; from here on nothing may be missing.
	duringOrAfter := func(_ string, at time.Time) bool { return !at.Before(stopped) }
	testcheck.Within(10*time.Second, func() bool { lost, _ := l.lost(duringOrAfter); return len(lost) == 0 })
	lost, counted := l.lost(duringOrAfter)

	others := func(from, to time.Time) writeFilter {
		return func(cluster string, at time.Time) bool {
			return cluster != "c" && !at.Before(from) && at.Before(to)
		}
	}
	t.Logf("other members, before the outage: %s", summary(l.latencies(others(time.Time{}, stopped))))
	t.Logf("other members, during the outage: %s", summary(l.latencies(others(stopped, back))))
	t.Logf("other members, after the outage:  %s", summary(l.latencies(others(back, time.Now()))))
	burst := func(cluster string, at time.Time) bool {
		return cluster == "c" && !at.Before(back) && at.Before(back.Add(2*time.Second))
	}
	t.Logf("member c, writes right after its return: %s", summary(l.latencies(burst)))
	t.Logf("member c, all writes after its return: %s", summary(l.latencies(inC)))
	t.Logf("member c reconciling again %s after its return (the first write made after it read back)", recovery(l, back, burst))
	t.Logf("objects created, changed or deleted during and after the outage: %d, not reconciled: %d", counted, len(lost))

	for _, line := range logs.all() {
		t.Logf("log: %s", line)
	}
	if !reconciled {
		notYet, _ := l.lost(inC)
		t.Errorf("%s after member c came back, these writes to it are still not reconciled: %s", recoveryBound, firstLines(notYet, 10))
	}
	if len(lost) > 0 {
		t.Errorf("%d of %d objects written during and after the outage were not reconciled: %s", len(lost), counted, firstLines(lost, 10))
	}
}

// everything selects every write.
func everything(string, time.Time) bool { return true }

// recovery returns how long after back the first write selected by f was read back: when the
// member was reconciling again; -1 while none is.
func recovery(l *ledger, back time.Time, f writeFilter) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	var first time.Time
	for _, o := range l.objects {
		for _, w := range o.writes {
			if !f(o.cluster, w.at) {
				continue
			}
			if d, ok := o.latency(w); ok && (first.IsZero() || w.at.Add(d).Before(first)) {
				first = w.at.Add(d)
			}
		}
	}
	if first.IsZero() {
		return -1
	}
	return first.Sub(back).Round(time.Millisecond)
}
