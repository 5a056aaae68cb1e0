// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package basic is the coordinator that engages every cluster of the provider on every replica:
// mcr's default, offered under multicluster-runtime's name. Passing it changes nothing.
package basic

import (
	mcmanager "mcr.dev/core/manager"
)

// Coordinator engages every cluster on every replica.
type Coordinator struct{}

// New returns the basic coordinator.
func New() *Coordinator { return &Coordinator{} }

// ManagerOptions returns no Option: the manager's default is this coordinator.
func (*Coordinator) ManagerOptions() []mcmanager.Option { return nil }

var _ mcmanager.Coordinator = &Coordinator{}
