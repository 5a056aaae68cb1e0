// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/multicluster"
)

// errInjected is what the probe returns from an Engage it was told to fail.
var errInjected = errors.New("conformance probe: injected Engage failure")

// engagement is one Engage call the probe saw.
type engagement struct {
	seq     int
	name    multicluster.ClusterName
	cluster cluster.Cluster
	ctx     context.Context
	at      time.Time
	// failed means the probe returned an error for this Engage.
	failed bool
	// deadAtEngage means ctx had already ended when Engage was called.
	deadAtEngage bool
	// endedAt is when ctx ended (UnixNano), 0 while it is alive.
	endedAt atomic.Int64
	// atEngage is what the probe's atEngage check found wrong with the cluster when Engage was
	// called, "" when nothing (or no check was set).
	atEngage string
}

func (e *engagement) live() bool { return e.ctx.Err() == nil }

func (e *engagement) String() string {
	state := "live"
	if !e.live() {
		state = "context done"
	}
	if e.failed {
		state += ", failed by the probe"
	}
	return fmt.Sprintf("#%d %q (%T %p, %s)", e.seq, e.name, e.cluster, e.cluster, state)
}

// probe is the Aware the suite gives the provider (directly, or as a runnable of a manager). It
// records every Engage and can fail chosen ones, to exercise a provider's error handling.
type probe struct {
	mu  sync.Mutex
	all []*engagement
	// seen holds the names engaged (successfully or not) so far.
	seen map[multicluster.ClusterName]bool
	// failIf, when set, selects the names whose first Engage the probe fails.
	failIf func(multicluster.ClusterName) bool
	// violations are contract breaches that are not tied to one test step (a nil cluster).
	violations []string
	// stopping is set once the suite stops the provider: an Engage racing with the stop may
	// then get a context that already ended.
	stopping atomic.Bool
	// onEngage, when set, is called for every Engage, under the probe's lock.
	onEngage func()
	// checkAtEngage, when set, looks at the cluster while Engage runs, before it returns (what
	// must already hold when a cluster is engaged), and says what is wrong, "" if nothing.
	checkAtEngage func(multicluster.ClusterName, cluster.Cluster) string
}

var _ multicluster.Aware = &probe{}

func newProbe() *probe {
	return &probe{seen: map[multicluster.ClusterName]bool{}}
}

// Engage records the engagement and succeeds, unless told to fail it.
func (p *probe) Engage(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster) error {
	p.mu.Lock()
	check := p.checkAtEngage
	p.mu.Unlock()
	var atEngage string
	if check != nil && cl != nil {
		atEngage = check(name, cl)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if cl == nil {
		p.violations = append(p.violations, fmt.Sprintf("Engage(%q) was called with a nil cluster", name))
		return fmt.Errorf("conformance probe: Engage(%q) with a nil cluster", name)
	}
	if ctx == nil {
		p.violations = append(p.violations, fmt.Sprintf("Engage(%q) was called with a nil context", name))
		return fmt.Errorf("conformance probe: Engage(%q) with a nil context", name)
	}
	e := &engagement{seq: len(p.all) + 1, name: name, cluster: cl, ctx: ctx, at: time.Now(), atEngage: atEngage}
	context.AfterFunc(ctx, func() { e.endedAt.Store(time.Now().UnixNano()) })
	if ctx.Err() != nil {
		e.deadAtEngage = true
		if !p.stopping.Load() {
			p.violations = append(p.violations, fmt.Sprintf("Engage(%q) was called with a context that had already ended (%v): "+
				"whatever the Aware starts with it stops at once", name, context.Cause(ctx)))
		}
	}
	p.all = append(p.all, e)
	if p.onEngage != nil {
		defer p.onEngage()
	}
	isNew := !p.seen[name]
	p.seen[name] = true
	if isNew && p.failIf != nil && p.failIf(name) {
		e.failed = true
		return errInjected
	}
	return nil
}

// Start lets a manager run the probe as a runnable, so that it is engaged with every cluster.
func (p *probe) Start(ctx context.Context) error {
	<-ctx.Done()
	return nil
}

// NeedLeaderElection reports false: the probe observes, it does not act.
func (p *probe) NeedLeaderElection() bool { return false }

// failFirstEngage makes the first Engage of every name that match selects fail.
func (p *probe) failFirstEngage(match func(multicluster.ClusterName) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failIf = match
}

// setCheckAtEngage sets the check made of every cluster while Engage runs.
func (p *probe) setCheckAtEngage(check func(multicluster.ClusterName, cluster.Cluster) string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.checkAtEngage = check
}

// of returns the engagements of name, oldest first.
func (p *probe) of(name multicluster.ClusterName) []*engagement {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*engagement
	for _, e := range p.all {
		if e.name == name {
			out = append(out, e)
		}
	}
	return out
}

// snapshot returns every engagement, oldest first.
func (p *probe) snapshot() []*engagement {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.all)
}

// latest returns the newest successful engagement of name made after the engagement numbered
// after (0 for any), whether or not its context is still alive, or nil.
func (p *probe) latest(name multicluster.ClusterName, after int) *engagement {
	engs := p.of(name)
	for i := len(engs) - 1; i >= 0; i-- {
		if e := engs[i]; !e.failed && e.seq > after {
			return e
		}
	}
	return nil
}

// active returns the newest successful engagement of name whose context is alive, or nil.
func (p *probe) active(name multicluster.ClusterName) *engagement {
	engs := p.of(name)
	for i := len(engs) - 1; i >= 0; i-- {
		if e := engs[i]; !e.failed && e.live() {
			return e
		}
	}
	return nil
}

// mark returns the number of the newest engagement so far, for latest.
func (p *probe) mark() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.all)
}

// instances counts the distinct cluster instances successfully engaged under name. Engaging
// the same instance again is a no-op by contract, so it does not count.
func (p *probe) instances(name multicluster.ClusterName) int {
	var seen []cluster.Cluster
	for _, e := range p.of(name) {
		if e.failed {
			continue
		}
		if !slices.ContainsFunc(seen, func(c cluster.Cluster) bool { return sameCluster(c, e.cluster) }) {
			seen = append(seen, e.cluster)
		}
	}
	return len(seen)
}

// violationList returns the recorded contract breaches.
func (p *probe) violationList() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.violations)
}

// describe summarizes what the probe saw of name, for failure messages.
func (p *probe) describe(name multicluster.ClusterName) string {
	engs := p.of(name)
	if len(engs) == 0 {
		all := p.snapshot()
		names := make([]string, 0, len(all))
		for _, e := range all {
			if !slices.Contains(names, string(e.name)) {
				names = append(names, string(e.name))
			}
		}
		return fmt.Sprintf("no Engage of %q was seen; names engaged so far: %q", name, names)
	}
	parts := make([]string, len(engs))
	for i, e := range engs {
		parts[i] = e.String()
	}
	return "engagements of " + string(name) + ": " + strings.Join(parts, "; ")
}

// sameCluster compares two clusters by identity without panicking on dynamic types that are
// not comparable.
func sameCluster(a, b cluster.Cluster) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}
