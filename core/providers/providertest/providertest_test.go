// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package providertest_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/providertest"
)

// scripted is a provider whose engagements the test drives by hand; clusters are nil because
// the Recorder never looks inside them.
type scripted struct {
	mu      sync.Mutex
	aware   multicluster.Aware
	ctx     context.Context
	cancels map[multicluster.ClusterName]context.CancelFunc
	started chan struct{}
}

func newScripted() *scripted {
	return &scripted{cancels: map[multicluster.ClusterName]context.CancelFunc{}, started: make(chan struct{})}
}

func (s *scripted) Start(ctx context.Context, aware multicluster.Aware) error {
	s.mu.Lock()
	s.aware, s.ctx = aware, ctx
	s.mu.Unlock()
	close(s.started)
	<-ctx.Done()
	return nil
}

func (s *scripted) Get(_ context.Context, name multicluster.ClusterName) (cluster.Cluster, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.cancels[name]; !ok {
		return nil, fmt.Errorf("%q: %w", name, multicluster.ErrClusterNotFound)
	}
	return nil, nil
}

func (s *scripted) IndexField(context.Context, client.Object, string, client.IndexerFunc) error {
	return nil
}

func (s *scripted) engage(name multicluster.ClusterName) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ctx, cancel := context.WithCancel(s.ctx)
	if err := s.aware.Engage(ctx, name, nil); err != nil {
		cancel()
		return err
	}
	if old, ok := s.cancels[name]; ok {
		old()
	}
	s.cancels[name] = cancel
	return nil
}

func (s *scripted) disengage(name multicluster.ClusterName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cancels[name]()
	delete(s.cancels, name)
}

func TestRecorderFollowsEngagements(t *testing.T) {
	p := newScripted()
	run := providertest.Start(t, p, 5*time.Second)
	<-p.started
	rec := run.Recorder

	if err := p.engage("a"); err != nil {
		t.Fatal(err)
	}
	if err := p.engage("b"); err != nil {
		t.Fatal(err)
	}
	first := rec.WaitEngaged(t, p, "a", 5*time.Second)
	if got := rec.Engaged(); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Fatalf("Engaged() = %v, want [a b]", got)
	}

	if err := p.engage("a"); err != nil {
		t.Fatal(err)
	}
	second := rec.WaitReengaged(t, p, "a", first, 5*time.Second)
	if second == first || first.Alive() || !second.Alive() {
		t.Fatalf("re-engagement not seen: first alive %v, second alive %v", first.Alive(), second.Alive())
	}
	if n := rec.Count("a"); n != 2 {
		t.Errorf("Count(a) = %d, want 2", n)
	}

	p.disengage("a")
	rec.WaitDisengaged(t, p, "a", second, 5*time.Second)
	if got := rec.Engaged(); len(got) != 1 || got[0] != "b" {
		t.Errorf("Engaged() after disengaging a = %v, want [b]", got)
	}

	run.Stop()
	if e, _ := rec.Latest("b"); e.Alive() {
		t.Error("b still engaged after the provider stopped")
	}
}

func TestRecorderFailEngage(t *testing.T) {
	p := newScripted()
	run := providertest.Start(t, p, 5*time.Second)
	<-p.started
	boom := errors.New("boom")
	run.Recorder.FailEngage(func(name multicluster.ClusterName) error {
		if name == "bad" {
			return boom
		}
		return nil
	})
	if err := p.engage("bad"); !errors.Is(err, boom) {
		t.Fatalf("engage(bad) = %v, want boom", err)
	}
	if err := p.engage("good"); err != nil {
		t.Fatal(err)
	}
	if e, n := run.Recorder.Latest("bad"); e != nil || n != 1 {
		t.Errorf("Latest(bad) = %v, %d; want no engagement and one attempt", e, n)
	}
	if got := run.Recorder.Engaged(); len(got) != 1 || got[0] != "good" {
		t.Errorf("Engaged() = %v, want [good]", got)
	}
}

// failingT records a fatal failure instead of ending the test, so that a test can check that a
// wait does fail.
type failingT struct {
	testing.TB
	failed bool
}

func (f *failingT) Helper() {}
func (f *failingT) Fatalf(string, ...any) {
	f.failed = true
	panic(f)
}

func TestEventuallyFailsAfterTimeout(t *testing.T) {
	ft := &failingT{TB: t}
	func() {
		defer func() {
			if r := recover(); r != nil && r != ft {
				panic(r)
			}
		}()
		providertest.Eventually(ft, 100*time.Millisecond, "never", func() error { return errors.New("not yet") })
	}()
	if !ft.failed {
		t.Fatal("Eventually did not fail a check that never passes")
	}
}

func TestCallsCountsPerName(t *testing.T) {
	var calls providertest.Calls
	ready := providertest.Counted(&calls, func(_ context.Context, cm *corev1.ConfigMap) bool { return cm.Name == "a" })
	a := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}
	if !ready(t.Context(), a) || ready(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b"}}) {
		t.Error("Counted changed what the hook returns")
	}
	ready(t.Context(), a)
	if calls.Count("a") != 2 || calls.Count("b") != 1 || calls.Count("c") != 0 {
		t.Errorf("counts a=%d b=%d c=%d, want 2 1 0", calls.Count("a"), calls.Count("b"), calls.Count("c"))
	}
	if got := calls.TypeOf("a"); got != "*v1.ConfigMap" {
		t.Errorf("TypeOf(a) = %q, want *v1.ConfigMap", got)
	}
	calls.WaitMore(t, "a", 1, time.Second)
	ft := &failingT{TB: t}
	func() {
		defer func() {
			if r := recover(); r != nil && r != ft {
				panic(r)
			}
		}()
		calls.WaitMore(ft, "a", 2, 100*time.Millisecond)
	}()
	if !ft.failed {
		t.Error("WaitMore did not fail without another call")
	}
}
