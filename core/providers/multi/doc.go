// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package multi composes providers: each member provider is added under a prefix, and its
// cluster "c" appears in the fleet as "<prefix><separator>c" (separator "#" by default), so one
// manager can serve, say, kind clusters and Cluster API clusters at once.
//
// Members can be added and removed at any time, before or after the manager starts the multi
// provider. A member that is a multicluster.ProviderRunnable is started by multi with a context
// derived from multi's own, and its engagements reach the manager through a wrapping Aware that
// prefixes the names. RemoveProvider disengages every cluster the member engaged, even one it
// engaged with a context of its own, and returns once the member's Start has returned.
//
// Get splits the name at the first separator and asks the member. IndexField is recorded and
// applied to every member, present and future; a member that rejects a recorded index is not
// added.
package multi
