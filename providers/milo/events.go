// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package milo

// EventSource is the reporting controller of the Events the provider records on Projects and
// ProjectControlPlanes.
const EventSource = "mcr.dev/" + providerName

// Reasons of the Events the provider records on the watched objects (Projects in ModeProject,
// ProjectControlPlanes in ModeProjectControlPlane). Warnings are recorded when a problem appears
// or changes, not again while it stays the same; each attempt still counts in the Errors metric.
// The reasons every provider shares (InvalidKubeconfig, ClusterSetupFailed, Unauthorized,
// ClusterUnreachable, EngageFailed, ClusterEngaged, CredentialsRotated, ClusterDisengaged) are the
// provider kit's: kit.Reason* in mcr.dev/core/providers/kit.
const (
	// ReasonProjectUnready (Normal): an engaged project stopped being ready; it stays engaged
	// for Options.UnreadyGracePeriod and is disengaged if it is not ready by then.
	ReasonProjectUnready = "ProjectUnready"
)
