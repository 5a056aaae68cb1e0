// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package manager

import (
	upstream "sigs.k8s.io/multicluster-runtime/pkg/manager"
)

// Upstream returns mgr as a sigs.k8s.io/multicluster-runtime Manager, for code compiled against
// upstream's interface, most often a provider whose SetupWithManager takes upstream's Manager:
//
//	p := kubeconfigprovider.New(kubeconfigprovider.Options{...}) // an upstream provider
//	mgr, err := mcmanager.New(cfg, p, mcmanager.Options{})
//	...
//	err = p.SetupWithManager(ctx, mcmanager.Upstream(mgr))
//
// The two interfaces differ in one method only: upstream's Add takes upstream's Runnable (a
// manager.Runnable that is also multicluster.Aware), ours any manager.Runnable, engaging those
// that are Aware. Everything else is the same method on the same manager, so engaging through
// the returned value engages with mgr's controllers.
func Upstream(mgr Manager) upstream.Manager {
	return &upstreamManager{Manager: mgr}
}

// upstreamManager is a Manager seen through upstream's interface.
type upstreamManager struct {
	Manager
}

var _ upstream.Manager = &upstreamManager{}

// Add adds r to the manager, which engages it with every cluster.
func (m *upstreamManager) Add(r upstream.Runnable) error { return m.Manager.Add(r) }
