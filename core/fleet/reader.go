// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package fleet

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
)

// clusterReader is the Backend of the Readers New returns: it is engaged with every cluster the
// manager engages and reads each through the cluster's own cache (or API reader).
type clusterReader struct {
	mgr  mcmanager.Manager
	opts Options
	log  logr.Logger

	mu      sync.RWMutex
	members map[multicluster.ClusterName]*member
	regs    map[*registration]struct{}
}

// member is one engagement of a cluster with the reader.
type member struct {
	name    multicluster.ClusterName
	cluster cluster.Cluster
	// ctx is the engagement's context: it ends when the cluster is disengaged.
	ctx context.Context
}

func (m *member) engaged() bool { return m.ctx.Err() == nil }

// New returns a reader of the clusters engaged with mgr, and adds it to mgr, which engages it
// with every cluster, those engaged before and those engaged later. The reader reads through
// the clusters mgr engages, whatever the provider; with sharding (mcmanager.WithSharding)
// those are the clusters this replica owns.
func New(mgr mcmanager.Manager, opts Options) (*Reader, error) {
	if mgr == nil {
		return nil, errors.New("fleet: New needs a manager")
	}
	own := &clusterReader{
		mgr:     mgr,
		opts:    opts.withDefaults(mgr.GetLogger()),
		members: map[multicluster.ClusterName]*member{},
		regs:    map[*registration]struct{}{},
	}
	own.log = own.opts.Logger
	r := &Reader{backend: own, own: own}
	if err := mgr.Add(r); err != nil {
		return nil, fmt.Errorf("fleet: adding the reader to the manager: %w", err)
	}
	return r, nil
}

// Engage makes cl part of the reader's reads under name until ctx ends, in place of an earlier
// engagement of name; engaging the same cluster again while it is engaged changes nothing. The
// manager calls it for every cluster it engages. It returns at once and fails only for a nil
// cluster: adding event handlers to the cluster happens on goroutines of their own, so that a
// slow cluster never holds up its engagement.
func (r *clusterReader) Engage(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster) error {
	if cl == nil {
		return fmt.Errorf("fleet: engaging cluster %q: cluster is nil", name)
	}
	m := &member{name: name, cluster: cl, ctx: ctx}
	r.mu.Lock()
	prev := r.members[name]
	if prev != nil && prev.cluster == cl && prev.engaged() {
		r.mu.Unlock()
		return nil
	}
	r.members[name] = m
	regs := make([]*registration, 0, len(r.regs))
	for reg := range r.regs {
		// Counted before the lock is released, so that HasSynced never misses the cluster.
		reg.pending.Add(1)
		regs = append(regs, reg)
	}
	r.mu.Unlock()

	context.AfterFunc(ctx, func() { r.disengaged(m) })
	for _, reg := range regs {
		if prev != nil {
			reg.drop(prev)
		}
		go reg.follow(m, 0, true)
	}
	return nil
}

// disengaged removes m from the reads, unless a newer engagement of its name replaced it.
func (r *clusterReader) disengaged(m *member) {
	r.mu.Lock()
	current := r.members[m.name] == m
	if current {
		delete(r.members, m.name)
	}
	regs := r.registrations()
	r.mu.Unlock()
	for _, reg := range regs {
		reg.drop(m)
	}
}

// Start engages the local cluster when Options.IncludeLocal asks for it, and waits until ctx
// ends. The manager calls it.
func (r *clusterReader) Start(ctx context.Context) error {
	if r.opts.IncludeLocal {
		local := r.mgr.GetLocalManager()
		if local.GetCache().WaitForCacheSync(ctx) {
			if err := r.Engage(ctx, mcmanager.LocalCluster, local); err != nil {
				return err
			}
		}
	}
	<-ctx.Done()
	return nil
}

// current reports whether m is the engagement of its name that the reader reads.
func (r *clusterReader) current(m *member) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.members[m.name] == m && m.engaged()
}

// engaged returns the engaged members (those named in only, unless it is nil), sorted by name.
func (r *clusterReader) engaged(only map[multicluster.ClusterName]bool) []*member {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.engagedLocked(only)
}

// engagedLocked is engaged for callers that hold r.mu.
func (r *clusterReader) engagedLocked(only map[multicluster.ClusterName]bool) []*member {
	members := make([]*member, 0, len(r.members))
	for name, m := range r.members {
		if m.engaged() && (only == nil || only[name]) {
			members = append(members, m)
		}
	}
	slices.SortFunc(members, func(a, b *member) int { return strings.Compare(string(a.name), string(b.name)) })
	return members
}

// registrations returns the event handlers; r.mu must be held.
func (r *clusterReader) registrations() []*registration {
	regs := make([]*registration, 0, len(r.regs))
	for reg := range r.regs {
		regs = append(regs, reg)
	}
	return regs
}

// forEach calls work for every member, at most Options.MaxConcurrency at a time, and returns
// the errors by cluster.
func (r *clusterReader) forEach(members []*member, work func(i int, m *member) error) map[multicluster.ClusterName]error {
	errs := make([]error, len(members))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(r.opts.MaxConcurrency, len(members)) {
		wg.Go(func() {
			for i := range next {
				errs[i] = work(i, members[i])
			}
		})
	}
	for i := range members {
		next <- i
	}
	close(next)
	wg.Wait()
	failed := map[multicluster.ClusterName]error{}
	for i, err := range errs {
		if err != nil {
			failed[members[i].name] = err
		}
	}
	return failed
}

// answer calls fn on a goroutine of its own, with ctx bounded by Options.ClusterTimeout, and
// returns what it returns, or the reason ctx ended as soon as it does: a call that does not heed
// its context (a RESTMapper's discovery request to an API server that accepts connections and
// never answers) does not hold up the caller. Such a call finishes on its own later.
func answer[T any](ctx context.Context, r *clusterReader, fn func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, r.opts.ClusterTimeout,
		fmt.Errorf("no answer within %s: %w", r.opts.ClusterTimeout, context.DeadlineExceeded))
	defer cancel()
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := fn(ctx)
		done <- result{v, err}
	}()
	select {
	case res := <-done:
		if res.err != nil && ctx.Err() != nil {
			// What fn says about its context ending (an informer that did not sync) is less
			// clear than why it ended.
			return res.v, fmt.Errorf("%w: %w", context.Cause(ctx), res.err)
		}
		return res.v, res.err
	case <-ctx.Done():
		var zero T
		return zero, context.Cause(ctx)
	}
}
