// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package multi

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/cluster"
	upstream "sigs.k8s.io/multicluster-runtime/pkg/manager"

	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
)

// ManagerSetupProvider is a provider that runs as controllers of a manager instead of as a
// runnable: its SetupWithManager registers them and they engage clusters through the manager.
// Providers compiled against sigs.k8s.io/multicluster-runtime, whose SetupWithManager takes
// upstream's Manager, are accepted by AsRunnable too.
type ManagerSetupProvider interface {
	multicluster.Provider
	SetupWithManager(ctx context.Context, mgr mcmanager.Manager) error
}

// upstreamSetupProvider is ManagerSetupProvider as written against upstream's Manager.
type upstreamSetupProvider interface {
	multicluster.Provider
	SetupWithManager(ctx context.Context, mgr upstream.Manager) error
}

// AsRunnable returns p as a provider that multi can run, for providers that set themselves up
// with a manager (see ManagerSetupProvider): when multi starts it, p's SetupWithManager is
// called with mgr, except that what p engages through it is engaged through multi, under
// multi's prefix. p may take our Manager or upstream's; any other p makes Start fail.
//
// The controllers SetupWithManager registers live as long as mgr: removing the member from
// multi disengages its clusters and stops passing on its engagements, but its controllers keep
// running.
func AsRunnable(p multicluster.Provider, mgr mcmanager.Manager) multicluster.Provider {
	return &setupRunnable{Provider: p, mgr: mgr}
}

// setupRunnable runs a ManagerSetupProvider as a ProviderRunnable.
type setupRunnable struct {
	multicluster.Provider
	mgr mcmanager.Manager
}

var _ multicluster.ProviderRunnable = &setupRunnable{}

// Start sets the provider up with a manager that engages through aware, and returns when ctx
// ends.
func (r *setupRunnable) Start(ctx context.Context, aware multicluster.Aware) error {
	wrapped := &engageThrough{Manager: r.mgr, ctx: ctx, aware: aware}
	var err error
	switch p := r.Provider.(type) {
	case ManagerSetupProvider:
		err = p.SetupWithManager(ctx, wrapped)
	case upstreamSetupProvider:
		err = p.SetupWithManager(ctx, mcmanager.Upstream(wrapped))
	default:
		return fmt.Errorf("multi provider: AsRunnable: %T has no SetupWithManager(context.Context, Manager) method, neither for mcr's Manager nor for multicluster-runtime's", r.Provider)
	}
	if err != nil {
		return fmt.Errorf("multi provider: setting up %T with the manager: %w", r.Provider, err)
	}
	<-ctx.Done()
	return nil
}

// engageThrough is a manager whose Engage goes to aware, as long as ctx lasts: after the member
// is removed, engagements of its still-running controllers are refused.
type engageThrough struct {
	mcmanager.Manager
	ctx   context.Context
	aware multicluster.Aware
}

func (m *engageThrough) Engage(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster) error {
	if err := m.ctx.Err(); err != nil {
		return fmt.Errorf("multi provider: cluster %q not engaged: its provider was removed", name)
	}
	return m.aware.Engage(ctx, name, cl)
}
