// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"context"
	"errors"
	"fmt"
	"time"

	"mcr.dev/core/multicluster"
)

// KubeconfigHarness is a ready-made Harness for providers whose source of truth holds one
// kubeconfig per member: Secrets, files, Cluster API kubeconfig Secrets, ClusterProfile access
// configs. Members are backed by Fleet; the provider author supplies how to build the provider
// and how to write and delete one entry. It also implements CredentialRotator (rotation writes
// the entry again with the member's new kubeconfig) and UnresponsiveMemberCreator (the entry
// gets the kubeconfig of the suite's unresponsive endpoint).
type KubeconfigHarness struct {
	// Fleet backs the members with real clusters. Required.
	Fleet *Fleet

	// Provider returns a new provider instance; see Harness.NewProvider. Required.
	Provider func(ctx context.Context) (multicluster.Provider, error)

	// Write creates the member's entry, or updates it, with the given kubeconfig. Required.
	Write func(ctx context.Context, name string, kubeconfig []byte) error

	// Delete removes the member's entry. Required.
	Delete func(ctx context.Context, name string) error

	// Update makes a change to the member's entry that must not re-engage it (a label, an
	// annotation).
	//
	// Default: Write again with the member's current kubeconfig, unchanged.
	Update func(ctx context.Context, name string) error

	// ProviderReports returns what the provider instances reported: their log lines and the texts of
	// their Events; see ReportSource. Needed for CredentialHygiene.
	//
	// Default: nil, which makes the CredentialHygiene test errored.
	ProviderReports func(ctx context.Context) ([]string, error)
	// SourceOutage makes the source of truth unreachable for the provider and returns the
	// function that brings it back; see SourceRestarter. Needed for SourceRestart.
	//
	// Default: nil, which makes the SourceRestart test errored.
	SourceOutage func(ctx context.Context) (restart func(context.Context) error, err error)
	// Resync is how often the provider instances that Provider builds resync; see Resyncer.
	// Needed for PeriodicResync.
	//
	// Default: 0, which makes the PeriodicResync test errored.
	Resync time.Duration
	// ClusterName returns the name the provider engages the member of that name under.
	//
	// Default: the member's name.
	ClusterName func(name string) multicluster.ClusterName
}

var (
	_ Harness                   = &KubeconfigHarness{}
	_ CredentialRotator         = &KubeconfigHarness{}
	_ ServerMover               = &KubeconfigHarness{}
	_ UnresponsiveMemberCreator = &KubeconfigHarness{}
	_ ReportSource              = &KubeconfigHarness{}
	_ SourceRestarter           = &KubeconfigHarness{}
	_ Resyncer                  = &KubeconfigHarness{}
)

func (h *KubeconfigHarness) check() error {
	var missing []error
	if h.Fleet == nil {
		missing = append(missing, errors.New("KubeconfigHarness.Fleet is nil"))
	}
	if h.Provider == nil {
		missing = append(missing, errors.New("KubeconfigHarness.Provider is nil"))
	}
	if h.Write == nil {
		missing = append(missing, errors.New("KubeconfigHarness.Write is nil"))
	}
	if h.Delete == nil {
		missing = append(missing, errors.New("KubeconfigHarness.Delete is nil"))
	}
	return errors.Join(missing...)
}

func (h *KubeconfigHarness) clusterName(name string) multicluster.ClusterName {
	if h.ClusterName != nil {
		return h.ClusterName(name)
	}
	return multicluster.ClusterName(name)
}

// NewProvider calls Provider.
func (h *KubeconfigHarness) NewProvider(ctx context.Context) (multicluster.Provider, error) {
	if err := h.check(); err != nil {
		return nil, err
	}
	return h.Provider(ctx)
}

// CreateMember adds a fleet member and writes its entry with its kubeconfig.
func (h *KubeconfigHarness) CreateMember(ctx context.Context, name string) (Member, error) {
	if err := h.check(); err != nil {
		return Member{}, err
	}
	fm, err := h.Fleet.Add(ctx, name)
	if err != nil {
		return Member{}, err
	}
	if err := h.Write(ctx, name, fm.Kubeconfig()); err != nil {
		return Member{}, errors.Join(fmt.Errorf("writing the entry of %q: %w", name, err), h.Fleet.Remove(ctx, name))
	}
	return fm.Member(h.clusterName(name)), nil
}

// UpdateMember calls Update, or writes the unchanged kubeconfig again.
func (h *KubeconfigHarness) UpdateMember(ctx context.Context, m Member) error {
	if h.Update != nil {
		return h.Update(ctx, m.ID)
	}
	fm := h.Fleet.Get(m.ID)
	if fm == nil {
		return fmt.Errorf("no fleet member %q", m.ID)
	}
	return h.Write(ctx, m.ID, fm.Kubeconfig())
}

// DeleteMember deletes the member's entry and then revokes its credentials.
func (h *KubeconfigHarness) DeleteMember(ctx context.Context, m Member) error {
	if err := h.Delete(ctx, m.ID); err != nil {
		return fmt.Errorf("deleting the entry of %q: %w", m.ID, err)
	}
	return h.Fleet.Remove(ctx, m.ID)
}

// RotateCredentials mints new credentials for the member and writes them to its entry.
func (h *KubeconfigHarness) RotateCredentials(ctx context.Context, m Member) (func(context.Context) error, error) {
	fm := h.Fleet.Get(m.ID)
	if fm == nil {
		return nil, fmt.Errorf("no fleet member %q", m.ID)
	}
	revoke, err := fm.Rotate(ctx)
	if err != nil {
		return nil, err
	}
	if err := h.Write(ctx, m.ID, fm.Kubeconfig()); err != nil {
		return nil, errors.Join(fmt.Errorf("writing the new kubeconfig of %q: %w", m.ID, err), revoke(ctx))
	}
	return revoke, nil
}

// MoveServer writes the member's entry with another address of its apiserver
// (FleetMember.MoveServer).
func (h *KubeconfigHarness) MoveServer(ctx context.Context, m Member) error {
	fm := h.Fleet.Get(m.ID)
	if fm == nil {
		return fmt.Errorf("no fleet member %q", m.ID)
	}
	if err := fm.MoveServer(); err != nil {
		return err
	}
	if err := h.Write(ctx, m.ID, fm.Kubeconfig()); err != nil {
		return fmt.Errorf("writing the moved kubeconfig of %q: %w", m.ID, err)
	}
	return nil
}

// CreateUnresponsiveMember writes the member's entry with the given kubeconfig; no fleet
// member backs it.
func (h *KubeconfigHarness) CreateUnresponsiveMember(ctx context.Context, name string, kubeconfig []byte) (Member, error) {
	if err := h.check(); err != nil {
		return Member{}, err
	}
	if err := h.Write(ctx, name, kubeconfig); err != nil {
		return Member{}, fmt.Errorf("writing the entry of %q: %w", name, err)
	}
	return Member{ID: name, Name: h.clusterName(name)}, nil
}

// Reports calls ProviderReports.
func (h *KubeconfigHarness) Reports(ctx context.Context) ([]string, error) {
	if h.ProviderReports == nil {
		return nil, errors.New("KubeconfigHarness.ProviderReports is nil: set it to return the provider's log lines and Events")
	}
	return h.ProviderReports(ctx)
}

// StopSource calls SourceOutage.
func (h *KubeconfigHarness) StopSource(ctx context.Context) (func(context.Context) error, error) {
	if h.SourceOutage == nil {
		return nil, errors.New("KubeconfigHarness.SourceOutage is nil: set it to take the source of truth down and back up")
	}
	return h.SourceOutage(ctx)
}

// ResyncPeriod returns Resync.
func (h *KubeconfigHarness) ResyncPeriod() time.Duration { return h.Resync }
