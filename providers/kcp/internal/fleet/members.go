// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package fleet

import (
	"context"
	"slices"
	"strings"

	"github.com/kcp-dev/logicalcluster/v3"

	"mcr.dev/providers/kcp/internal/cache"
)

// member is one engagement of a logical cluster with the manager.
type member struct {
	name logicalcluster.Name
	// shared is the cache of the endpoint the logical cluster is engaged through, which stands
	// for the endpoint; view is the logical cluster's view of it.
	shared *cache.Wildcard
	view   *cache.Scoped
	// ctx is the engagement's context: it ends when the logical cluster is disengaged.
	ctx context.Context
}

// Engaged makes the logical cluster of view, engaged with the manager until ctx ends, part of
// the fleet-wide reads, in place of an earlier engagement of its name, and announces it to the
// event handlers.
func (b *Backend) Engaged(ctx context.Context, view *cache.Scoped) {
	b.engaged(&member{name: view.Cluster(), shared: view.Shared(), view: view, ctx: ctx})
}

// engaged is Engaged of a member, whose context is the engagement's.
func (b *Backend) engaged(m *member) {
	ctx := m.ctx
	b.mu.Lock()
	if b.members == nil {
		b.members = map[logicalcluster.Name]*member{}
	}
	prev := b.members[m.name]
	b.members[m.name] = m
	regs := make([]*subscription, 0, len(b.regs))
	for r := range b.regs {
		r.pending.Add(1)
		regs = append(regs, r)
	}
	b.mu.Unlock()
	context.AfterFunc(ctx, func() { b.disengaged(m) })
	if prev != nil {
		b.forgetIn(prev)
	}
	if len(regs) == 0 {
		return
	}
	// Not in the engagement's path: a handler may be slow, and the informer may be new.
	go func() {
		for _, r := range regs {
			r.announce(m)
		}
	}()
}

// disengaged removes m from the fleet-wide reads, unless a newer engagement replaced it.
func (b *Backend) disengaged(m *member) {
	b.mu.Lock()
	current := b.members[m.name] == m
	if current {
		delete(b.members, m.name)
	}
	b.mu.Unlock()
	if current {
		b.forgetIn(m)
	}
}

// forgetIn tells every registration that m is no longer engaged.
func (b *Backend) forgetIn(m *member) {
	for _, r := range b.registrations() {
		r.forget(m, m.shared)
	}
}

func (b *Backend) registrations() []*subscription {
	b.mu.RLock()
	defer b.mu.RUnlock()
	regs := make([]*subscription, 0, len(b.regs))
	for r := range b.regs {
		regs = append(regs, r)
	}
	return regs
}

// register adds r and returns the endpoints that serve engaged logical clusters now.
func (b *Backend) register(r *subscription) []*cache.Wildcard {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.regs == nil {
		b.regs = map[*subscription]bool{}
	}
	b.regs[r] = true
	var endpoints []*cache.Wildcard
	for _, m := range b.members {
		if !slices.Contains(endpoints, m.shared) {
			endpoints = append(endpoints, m.shared)
		}
	}
	return endpoints
}

func (b *Backend) unregister(r *subscription) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.regs, r)
}

// isMember reports whether m is the current engagement of its logical cluster.
func (b *Backend) isMember(m *member) bool {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.members[m.name] == m && m.ctx.Err() == nil
}

// serves reports whether the logical cluster name is engaged through shared.
func (b *Backend) serves(shared *cache.Wildcard, name logicalcluster.Name) bool {
	b.mu.RLock()
	defer b.mu.RUnlock()
	m := b.members[name]
	return m != nil && m.shared == shared && m.ctx.Err() == nil
}

// membersOn returns the engagements through shared.
func (b *Backend) membersOn(shared *cache.Wildcard) []*member {
	b.mu.RLock()
	defer b.mu.RUnlock()
	var members []*member
	for _, m := range b.members {
		if m.shared == shared && m.ctx.Err() == nil {
			members = append(members, m)
		}
	}
	return members
}

// endpointMembers are the engaged logical clusters of one endpoint.
type endpointMembers struct {
	shared  *cache.Wildcard
	members []*member
}

// byEndpoint returns the engaged logical clusters (those in only, when it is not nil) by
// endpoint, in the order of the endpoints' URLs and the logical clusters' names.
func (b *Backend) byEndpoint(only map[logicalcluster.Name]bool) []endpointMembers {
	b.mu.RLock()
	var groups []endpointMembers
	for name, m := range b.members {
		if m.ctx.Err() != nil || only != nil && !only[name] {
			continue
		}
		i := slices.IndexFunc(groups, func(g endpointMembers) bool { return g.shared == m.shared })
		if i < 0 {
			groups = append(groups, endpointMembers{shared: m.shared})
			i = len(groups) - 1
		}
		groups[i].members = append(groups[i].members, m)
	}
	b.mu.RUnlock()
	slices.SortFunc(groups, func(a, b endpointMembers) int { return strings.Compare(a.shared.URL(), b.shared.URL()) })
	for _, g := range groups {
		slices.SortFunc(g.members, func(a, b *member) int { return strings.Compare(a.name.String(), b.name.String()) })
	}
	return groups
}
