// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package coreproviders_test

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/conformance"
	"mcr.dev/core/multicluster"
	clustersprovider "mcr.dev/core/providers/clusters"
	"mcr.dev/core/providers/multi"
	"mcr.dev/core/providers/nop"
	"mcr.dev/core/providers/single"
)

// clustersHarness drives mcr.dev/core/providers/clusters, whose source of truth is the code that
// calls Add and Remove: the harness keeps the members and adds each to every running provider
// instance, each time as a new cluster built from the member's current credentials.
type clustersHarness struct {
	fleet *conformance.Fleet

	mu      sync.Mutex
	members map[string]*conformance.FleetMember
	live    map[*clustersprovider.Provider]bool
}

var (
	_ conformance.Harness           = &clustersHarness{}
	_ conformance.CredentialRotator = &clustersHarness{}
)

func newClustersHarness(fleet *conformance.Fleet) *clustersHarness {
	return &clustersHarness{fleet: fleet, members: map[string]*conformance.FleetMember{}, live: map[*clustersprovider.Provider]bool{}}
}

func (h *clustersHarness) NewProvider(ctx context.Context) (multicluster.Provider, error) {
	p, err := h.newProvider(ctx)
	if err != nil {
		return nil, err
	}
	return p, nil
}

func (h *clustersHarness) newProvider(ctx context.Context) (*clustersprovider.Provider, error) {
	p := clustersprovider.New(clustersprovider.Options{})
	h.mu.Lock()
	defer h.mu.Unlock()
	for name, fm := range h.members {
		if err := addCluster(ctx, p, name, fm, false); err != nil {
			return nil, err
		}
	}
	h.live[p] = true
	context.AfterFunc(ctx, func() {
		h.mu.Lock()
		delete(h.live, p)
		h.mu.Unlock()
	})
	return p, nil
}

// addCluster adds (or replaces) a new cluster for fm to p. A provider instance that has
// already stopped (the first instance of a restart) refuses, which is fine.
func addCluster(ctx context.Context, p *clustersprovider.Provider, name string, fm *conformance.FleetMember, replace bool) error {
	cl, err := cluster.New(fm.Config())
	if err != nil {
		return err
	}
	if replace {
		err = p.AddOrReplace(ctx, multicluster.ClusterName(name), cl)
	} else {
		err = p.Add(ctx, multicluster.ClusterName(name), cl)
	}
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

func (h *clustersHarness) providers() []*clustersprovider.Provider {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []*clustersprovider.Provider
	for p := range h.live {
		out = append(out, p)
	}
	return out
}

func (h *clustersHarness) CreateMember(ctx context.Context, name string) (conformance.Member, error) {
	fm, err := h.fleet.Add(ctx, name)
	if err != nil {
		return conformance.Member{}, err
	}
	h.mu.Lock()
	h.members[name] = fm
	h.mu.Unlock()
	for _, p := range h.providers() {
		if err := addCluster(ctx, p, name, fm, false); err != nil {
			return conformance.Member{}, err
		}
	}
	return fm.Member(multicluster.ClusterName(name)), nil
}

// UpdateMember announces the member again with the same credentials, which must be a no-op.
func (h *clustersHarness) UpdateMember(ctx context.Context, m conformance.Member) error {
	fm := h.fleet.Get(m.ID)
	for _, p := range h.providers() {
		if err := addCluster(ctx, p, m.ID, fm, true); err != nil {
			return err
		}
	}
	return nil
}

func (h *clustersHarness) DeleteMember(ctx context.Context, m conformance.Member) error {
	h.mu.Lock()
	delete(h.members, m.ID)
	h.mu.Unlock()
	for _, p := range h.providers() {
		p.Remove(multicluster.ClusterName(m.ID))
	}
	return h.fleet.Remove(ctx, m.ID)
}

func (h *clustersHarness) RotateCredentials(ctx context.Context, m conformance.Member) (func(context.Context) error, error) {
	fm := h.fleet.Get(m.ID)
	if fm == nil {
		return nil, fmt.Errorf("no member %q", m.ID)
	}
	revoke, err := fm.Rotate(ctx)
	if err != nil {
		return nil, err
	}
	for _, p := range h.providers() {
		if err := addCluster(ctx, p, m.ID, fm, true); err != nil {
			return nil, err
		}
	}
	return revoke, nil
}

// multiHarness drives mcr.dev/core/providers/multi with two clusters providers, "east" and
// "west", that take members in turn, and a nop provider that never has any.
type multiHarness struct {
	east, west *clustersHarness

	mu    sync.Mutex
	turn  int
	where map[string]*clustersHarness
}

var (
	_ conformance.Harness           = &multiHarness{}
	_ conformance.CredentialRotator = &multiHarness{}
)

func newMultiHarness(fleet *conformance.Fleet) *multiHarness {
	return &multiHarness{east: newClustersHarness(fleet), west: newClustersHarness(fleet), where: map[string]*clustersHarness{}}
}

func (h *multiHarness) prefix(inner *clustersHarness) string {
	if inner == h.east {
		return "east"
	}
	return "west"
}

func (h *multiHarness) NewProvider(ctx context.Context) (multicluster.Provider, error) {
	m := multi.New(multi.Options{})
	for _, inner := range []*clustersHarness{h.east, h.west} {
		p, err := inner.newProvider(ctx)
		if err != nil {
			return nil, err
		}
		if err := m.AddProvider(h.prefix(inner), p); err != nil {
			return nil, err
		}
	}
	if err := m.AddProvider("nop", nop.New()); err != nil {
		return nil, err
	}
	return m, nil
}

func (h *multiHarness) inner(id string) *clustersHarness {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.where[id]
}

func (h *multiHarness) CreateMember(ctx context.Context, name string) (conformance.Member, error) {
	h.mu.Lock()
	inner := h.east
	if h.turn%2 == 1 {
		inner = h.west
	}
	h.turn++
	h.where[name] = inner
	h.mu.Unlock()
	m, err := inner.CreateMember(ctx, name)
	if err != nil {
		return m, err
	}
	m.Name = multicluster.ClusterName(h.prefix(inner) + multi.DefaultSeparator + name)
	return m, nil
}

func (h *multiHarness) UpdateMember(ctx context.Context, m conformance.Member) error {
	return h.inner(m.ID).UpdateMember(ctx, m)
}

func (h *multiHarness) DeleteMember(ctx context.Context, m conformance.Member) error {
	return h.inner(m.ID).DeleteMember(ctx, m)
}

func (h *multiHarness) RotateCredentials(ctx context.Context, m conformance.Member) (func(context.Context) error, error) {
	return h.inner(m.ID).RotateCredentials(ctx, m)
}

// singleHarness drives mcr.dev/core/providers/single. A single provider serves one fixed
// cluster, so the fleet is a multi provider with one single provider per member, added with
// AddProvider and removed with RemoveProvider; every test exercises single's Start, Get,
// IndexField (also before Start) and shutdown.
type singleHarness struct {
	fleet *conformance.Fleet

	mu      sync.Mutex
	members map[string]*conformance.FleetMember
	live    map[*multi.Provider]bool
}

var _ conformance.Harness = &singleHarness{}

// singleClusterName is the name each single provider serves its cluster under.
const singleClusterName = "cluster"

func newSingleHarness(fleet *conformance.Fleet) *singleHarness {
	return &singleHarness{fleet: fleet, members: map[string]*conformance.FleetMember{}, live: map[*multi.Provider]bool{}}
}

func addSingle(m *multi.Provider, name string, fm *conformance.FleetMember) error {
	cl, err := cluster.New(fm.Config())
	if err != nil {
		return err
	}
	return m.AddProvider(name, single.New(singleClusterName, cl, single.Options{}))
}

func (h *singleHarness) NewProvider(ctx context.Context) (multicluster.Provider, error) {
	m := multi.New(multi.Options{})
	h.mu.Lock()
	defer h.mu.Unlock()
	for name, fm := range h.members {
		if err := addSingle(m, name, fm); err != nil {
			return nil, err
		}
	}
	h.live[m] = true
	context.AfterFunc(ctx, func() {
		h.mu.Lock()
		delete(h.live, m)
		h.mu.Unlock()
	})
	return m, nil
}

func (h *singleHarness) providers() []*multi.Provider {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []*multi.Provider
	for p := range h.live {
		out = append(out, p)
	}
	return out
}

func (h *singleHarness) CreateMember(ctx context.Context, name string) (conformance.Member, error) {
	fm, err := h.fleet.Add(ctx, name)
	if err != nil {
		return conformance.Member{}, err
	}
	h.mu.Lock()
	h.members[name] = fm
	h.mu.Unlock()
	for _, m := range h.providers() {
		if err := addSingle(m, name, fm); err != nil {
			return conformance.Member{}, err
		}
	}
	return fm.Member(multicluster.ClusterName(name + multi.DefaultSeparator + singleClusterName)), nil
}

// UpdateMember does nothing: a single provider has no source of truth that could change
// without changing the cluster.
func (h *singleHarness) UpdateMember(context.Context, conformance.Member) error { return nil }

func (h *singleHarness) DeleteMember(ctx context.Context, m conformance.Member) error {
	h.mu.Lock()
	delete(h.members, m.ID)
	h.mu.Unlock()
	for _, p := range h.providers() {
		p.RemoveProvider(m.ID)
	}
	return h.fleet.Remove(ctx, m.ID)
}
