// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package manager

// Coordinator decides which of the provider's clusters this replica engages, under
// multicluster-runtime's name for that option. mcr has two, each a package of
// mcr.dev/core/manager/coordinator: basic (every cluster on every replica, the default) and
// sharded (multicluster-runtime's sharded coordinator, spelled as there, running mcr's
// sharding: see WithSharding). A coordinator contributes the manager Option that gives it effect;
// multicluster-runtime's own coordinators and custom ones written against its interface are not
// accepted.
type Coordinator interface {
	// ManagerOptions returns the Options that configure the manager for this coordinator.
	ManagerOptions() []Option
}

// WithCoordinator configures the manager for c: mcmanager.WithCoordinator(sharded.New(...))
// compiles and behaves as multicluster-runtime documents, on mcr's sharding.
func WithCoordinator(c Coordinator) Option {
	return func(m *mcManager) {
		if c == nil {
			return
		}
		for _, o := range c.ManagerOptions() {
			o(m)
		}
	}
}
