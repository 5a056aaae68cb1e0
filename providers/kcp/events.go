package kcp

import (
	"mcr.dev/core/providers/kit"
)

// EventSource is the reporting controller of the Events the provider records on the
// APIExportEndpointSlice.
const EventSource = "mcr.dev/" + providerName

// Reasons of the Events the provider records on the APIExportEndpointSlice, and of its Errors
// metric. Warnings are recorded when a problem appears or changes, not again while it stays the
// same; each attempt still counts in the Errors metric. Logical clusters have no object on the
// provider's side to record Events on: their outcomes are logged, with the same reasons as in
// every provider.
const (
	// ReasonEndpointUnavailable (Warning): an endpoint of the slice cannot be watched (not
	// reachable, not serving the watched type, access refused, not synced within
	// Options.CacheSyncTimeout). Retried with backoff.
	ReasonEndpointUnavailable = "EndpointUnavailable"

	// ReasonEndpointReady (Normal): an endpoint that could not be watched is watched now.
	ReasonEndpointReady = "EndpointReady"

	// ReasonEngageFailed (metric and log only): the manager refused a logical cluster (an Aware
	// returned an error). Retried with backoff.
	ReasonEngageFailed = kit.ReasonEngageFailed

	// ReasonClusterUnreachable (metric and log only): a logical cluster's view did not sync
	// within Options.CacheSyncTimeout. Retried with backoff.
	ReasonClusterUnreachable = kit.ReasonClusterUnreachable

	// ReasonClusterSetupFailed (metric and log only): the client of a logical cluster could not
	// be built. Not retried: the next change of its objects is.
	ReasonClusterSetupFailed = kit.ReasonClusterSetupFailed

	// reasonInvalidObject is the metric reason of an object without a valid kcp.io/cluster.
	reasonInvalidObject = "InvalidObject"
)
