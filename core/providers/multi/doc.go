// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package multi composes providers: each member provider is added under a prefix, and its
// cluster "c" appears in the fleet as "<prefix><separator>c" (separator "#" by default), so one
// manager can serve, say, kind clusters and Cluster API clusters at once. Members are added
// (AddProvider) and removed (RemoveProvider) at any time; multi starts those that are
// runnable, applies every IndexField to present and future members, and merges their
// FleetStatus.
//
// See docs/providers/multi.md in the mcr repository.
package multi
