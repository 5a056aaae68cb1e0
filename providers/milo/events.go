package milo

import (
	"mcr.dev/core/providers/kit"
)

// EventSource is the reporting controller of the Events the provider records on Projects and
// ProjectControlPlanes.
const EventSource = "mcr.dev/" + providerName

// Reasons of the Events the provider records on the watched objects (Projects in ModeProject,
// ProjectControlPlanes in ModeProjectControlPlane). Warnings are recorded when a problem appears
// or changes, not again while it stays the same; each attempt still counts in the Errors metric.
const (
	// ReasonClusterSetupFailed (Warning): an Options.RESTOptions function failed or
	// controller-runtime refused the project's rest.Config. Retried when the object changes,
	// and at every resync.
	ReasonClusterSetupFailed = kit.ReasonClusterSetupFailed

	// ReasonUnauthorized (Warning): the project's control plane refused the provider's
	// credentials. Retried with backoff.
	ReasonUnauthorized = kit.ReasonUnauthorized

	// ReasonClusterUnreachable (Warning): the project's control plane did not answer, or its
	// cache did not sync within Options.CacheSyncTimeout. Retried with backoff.
	ReasonClusterUnreachable = kit.ReasonClusterUnreachable

	// ReasonEngageFailed (Warning): the manager refused the cluster (an Aware returned an
	// error). Retried with backoff.
	ReasonEngageFailed = kit.ReasonEngageFailed

	// ReasonClusterEngaged (Normal): the project's control plane is engaged.
	ReasonClusterEngaged = kit.ReasonClusterEngaged

	// ReasonProjectUnready (Normal): an engaged project stopped being ready; it stays engaged
	// for Options.UnreadyGracePeriod and is disengaged if it is not ready by then.
	ReasonProjectUnready = "ProjectUnready"

	// ReasonClusterDisengaged (Normal): the project's control plane was disengaged because the
	// object stayed unready past the grace period or stopped being selected. Deleted objects get
	// no Event.
	ReasonClusterDisengaged = kit.ReasonClusterDisengaged
)
