// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package reference

import (
	"context"
	"fmt"
	"time"

	"mcr.dev/conformance"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/providertest"
)

// Harness is the conformance harness of the reference provider: members are fleet members whose
// kubeconfigs live in an Inventory shared by every provider instance of a test.
type Harness struct {
	Fleet     *conformance.Fleet
	Inventory *Inventory
	Faults    Faults
	// Logs collects the log lines of every provider instance of the harness.
	Logs providertest.LogBuffer
}

var (
	_ conformance.Harness           = &Harness{}
	_ conformance.CredentialRotator = &Harness{}
	_ conformance.ServerMover       = &Harness{}
	_ conformance.ReadinessToggler  = &Harness{}

	_ conformance.UnresponsiveMemberCreator = &Harness{}
	_ conformance.ReportSource              = &Harness{}
	_ conformance.SourceRestarter           = &Harness{}
	_ conformance.Resyncer                  = &Harness{}
)

// resyncPeriod is how often the harness's providers resync.
const resyncPeriod = time.Second

// NewHarness returns a harness over fleet with a fresh inventory; faults break the provider.
func NewHarness(fleet *conformance.Fleet, faults Faults) *Harness {
	return &Harness{Fleet: fleet, Inventory: NewInventory(), Faults: faults}
}

// NewProvider returns a reference provider with the harness's faults. Whatever a fault leaves
// running is stopped when ctx ends.
func (h *Harness) NewProvider(ctx context.Context) (multicluster.Provider, error) {
	p := New(h.Inventory, h.Faults)
	p.Log = h.Logs.Logger()
	p.ResyncPeriod = resyncPeriod
	context.AfterFunc(ctx, p.Close)
	return p, nil
}

// CreateMember adds a fleet member and puts its kubeconfig into the inventory.
func (h *Harness) CreateMember(ctx context.Context, name string) (conformance.Member, error) {
	fm, err := h.Fleet.Add(ctx, name)
	if err != nil {
		return conformance.Member{}, err
	}
	h.Inventory.Put(name, fm.Kubeconfig())
	return fm.Member(multicluster.ClusterName(name)), nil
}

// UpdateMember writes the member's entry again, unchanged.
func (h *Harness) UpdateMember(_ context.Context, m conformance.Member) error {
	h.Inventory.Touch(m.ID)
	return nil
}

// DeleteMember removes the member from the inventory and revokes its credentials.
func (h *Harness) DeleteMember(ctx context.Context, m conformance.Member) error {
	h.Inventory.Delete(m.ID)
	return h.Fleet.Remove(ctx, m.ID)
}

// RotateCredentials gives the member new credentials and puts them into the inventory.
func (h *Harness) RotateCredentials(ctx context.Context, m conformance.Member) (func(context.Context) error, error) {
	fm := h.Fleet.Get(m.ID)
	if fm == nil {
		return nil, fmt.Errorf("no fleet member %q", m.ID)
	}
	revoke, err := fm.Rotate(ctx)
	if err != nil {
		return nil, err
	}
	h.Inventory.Put(m.ID, fm.Kubeconfig())
	return revoke, nil
}

// MoveServer puts the member's kubeconfig with another address of its apiserver into the
// inventory (conformance.FleetMember.MoveServer).
func (h *Harness) MoveServer(_ context.Context, m conformance.Member) error {
	fm := h.Fleet.Get(m.ID)
	if fm == nil {
		return fmt.Errorf("no fleet member %q", m.ID)
	}
	if err := fm.MoveServer(); err != nil {
		return err
	}
	h.Inventory.Put(m.ID, fm.Kubeconfig())
	return nil
}

// SetReady changes the member's readiness in the inventory.
func (h *Harness) SetReady(_ context.Context, m conformance.Member, ready bool) error {
	h.Inventory.SetReady(m.ID, ready)
	return nil
}

// CreateUnresponsiveMember puts the given kubeconfig into the inventory.
func (h *Harness) CreateUnresponsiveMember(_ context.Context, name string, kubeconfig []byte) (conformance.Member, error) {
	h.Inventory.Put(name, kubeconfig)
	return conformance.Member{ID: name, Name: multicluster.ClusterName(name)}, nil
}

// Reports returns the log lines of the harness's providers (the reference provider records no
// Events).
func (h *Harness) Reports(context.Context) ([]string, error) {
	return h.Logs.Lines(), nil
}

// StopSource takes the inventory down until restart is called.
func (h *Harness) StopSource(context.Context) (func(context.Context) error, error) {
	h.Inventory.SetDown(true)
	return func(context.Context) error {
		h.Inventory.SetDown(false)
		return nil
	}, nil
}

// ResyncPeriod is how often the harness's providers resync.
func (h *Harness) ResyncPeriod() time.Duration { return resyncPeriod }
