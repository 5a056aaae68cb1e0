// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package providertest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/multicluster"
)

// pollInterval is how often the waits look again.
const pollInterval = 25 * time.Millisecond

// Engagement is one Engage call seen by a Recorder.
type Engagement struct {
	// Cluster is the engaged cluster.
	Cluster cluster.Cluster
	// Ctx is the engagement's context; it ends when the provider disengages the cluster.
	Ctx context.Context
}

// Alive reports whether the engagement has not ended.
func (e *Engagement) Alive() bool { return e != nil && e.Ctx.Err() == nil }

// Recorder is a multicluster.Aware that remembers the latest engagement of every cluster name and
// how often each name was engaged. The zero value is not usable; call NewRecorder.
type Recorder struct {
	mu      sync.Mutex
	current map[multicluster.ClusterName]*Engagement
	count   map[multicluster.ClusterName]int
	// engageErr, when set, is returned by Engage for the names it matches.
	engageErr func(multicluster.ClusterName) error
}

var _ multicluster.Aware = &Recorder{}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder {
	return &Recorder{
		current: map[multicluster.ClusterName]*Engagement{},
		count:   map[multicluster.ClusterName]int{},
	}
}

// FailEngage makes Engage return fn(name) when that is not nil, as a manager does when a
// controller cannot start on a cluster; such calls are counted but not recorded as engagements.
func (r *Recorder) FailEngage(fn func(multicluster.ClusterName) error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.engageErr = fn
}

// Engage records the engagement.
func (r *Recorder) Engage(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.count[name]++
	if r.engageErr != nil {
		if err := r.engageErr(name); err != nil {
			return err
		}
	}
	r.current[name] = &Engagement{Cluster: cl, Ctx: ctx}
	return nil
}

// Engaged returns the names whose latest engagement is alive, sorted.
func (r *Recorder) Engaged() []multicluster.ClusterName {
	r.mu.Lock()
	defer r.mu.Unlock()
	var names []multicluster.ClusterName
	for name, e := range r.current {
		if e.Alive() {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// Latest returns the latest engagement of name (nil if there was none) and how many times Engage
// was called for it.
func (r *Recorder) Latest(name multicluster.ClusterName) (*Engagement, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.current[name], r.count[name]
}

// Count returns how many times Engage was called for name.
func (r *Recorder) Count(name multicluster.ClusterName) int {
	_, n := r.Latest(name)
	return n
}

// Eventually calls check until it returns nil, failing the test with its last error after timeout.
func Eventually(t testing.TB, timeout time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached within %s: %v", what, timeout, err)
		}
		time.Sleep(pollInterval)
	}
}

// WaitEngaged waits until name is engaged and p.Get returns the engaged cluster, and returns the
// engagement.
func (r *Recorder) WaitEngaged(t testing.TB, p multicluster.Provider, name multicluster.ClusterName, timeout time.Duration) *Engagement {
	t.Helper()
	var e *Engagement
	Eventually(t, timeout, fmt.Sprintf("cluster %q engaged", name), func() error {
		e, _ = r.Latest(name)
		if !e.Alive() {
			return fmt.Errorf("not engaged; engaged: %v", r.Engaged())
		}
		cl, err := p.Get(context.Background(), name)
		if err != nil {
			return fmt.Errorf("engaged but Get: %w", err)
		}
		if cl != e.Cluster {
			return errors.New("the provider's Get returns another instance than the engaged one")
		}
		return nil
	})
	return e
}

// WaitReengaged waits until name is engaged with another cluster than old (old's context ended),
// and returns the new engagement.
func (r *Recorder) WaitReengaged(t testing.TB, p multicluster.Provider, name multicluster.ClusterName, old *Engagement, timeout time.Duration) *Engagement {
	t.Helper()
	var e *Engagement
	Eventually(t, timeout, fmt.Sprintf("cluster %q engaged again", name), func() error {
		if old.Alive() {
			return errors.New("the old engagement is still alive")
		}
		e, _ = r.Latest(name)
		if e == old || !e.Alive() {
			return fmt.Errorf("not engaged again; engaged: %v", r.Engaged())
		}
		cl, err := p.Get(context.Background(), name)
		if err != nil {
			return fmt.Errorf("engaged but Get: %w", err)
		}
		if cl != e.Cluster {
			return errors.New("the provider's Get returns another instance than the engaged one")
		}
		return nil
	})
	return e
}

// refreshedInPlaceLog starts the kit's log line for credentials replaced in place.
const refreshedInPlaceLog = "Replaced the credentials of the engaged cluster in place"

// WaitRefreshedInPlace waits until logs hold n lines in which the kit reports that name's
// engaged cluster took new credentials in place, and fails the test at once if e, the
// engagement before the change, ends or is replaced meanwhile.
func (r *Recorder) WaitRefreshedInPlace(t testing.TB, logs *LogBuffer, name multicluster.ClusterName, e *Engagement, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if latest, _ := r.Latest(name); latest != e || !e.Alive() {
			t.Fatalf("cluster %q was engaged again, not refreshed in place", name)
		}
		got := len(logs.All(`"cluster"="`+string(name)+`"`, refreshedInPlaceLog))
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster %q refreshed in place: %d refreshes logged within %s, want %d", name, got, timeout, n)
		}
		time.Sleep(pollInterval)
	}
}

// WaitDisengaged waits until the engagement e has ended and p.Get reports name as not found.
func (r *Recorder) WaitDisengaged(t testing.TB, p multicluster.Provider, name multicluster.ClusterName, e *Engagement, timeout time.Duration) {
	t.Helper()
	Eventually(t, timeout, fmt.Sprintf("cluster %q disengaged", name), func() error {
		if e.Alive() {
			return errors.New("engage context still alive")
		}
		if _, err := p.Get(context.Background(), name); !errors.Is(err, multicluster.ErrClusterNotFound) {
			return fmt.Errorf("the provider's Get returned %v, want ErrClusterNotFound", err)
		}
		return nil
	})
}
