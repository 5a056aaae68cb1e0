// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kcp

// EventSource is the reporting controller of the Events the provider records on the endpoint
// object (the APIExportEndpointSlice, by default).
const EventSource = "mcr.dev/" + providerName

// Reasons of the Events the provider records on the endpoint object, and of its Errors
// metric. Warnings are recorded when a problem appears or changes, not again while it stays the
// same; each attempt still counts in the Errors metric. Logical clusters have no object on the
// provider's side to record Events on: their outcomes are logged, with the same reasons as in
// every provider.
// The reasons every provider shares (InvalidKubeconfig, ClusterSetupFailed, Unauthorized,
// ClusterUnreachable, EngageFailed, ClusterEngaged, CredentialsRotated, ClusterDisengaged) are the
// provider kit's: kit.Reason* in mcr.dev/core/providers/kit.
const (
	// ReasonEndpointUnavailable (Warning): an endpoint the endpoint object lists cannot be
	// watched (not reachable, not serving the watched type, access refused, not synced within
	// Options.CacheSyncTimeout). Retried with backoff. An endpoint URL with user info, a query
	// or a fragment is refused with this reason too (metric reason InvalidEndpointURL), without
	// quoting it, and not retried until the object lists another URL.
	ReasonEndpointUnavailable = "EndpointUnavailable"

	// ReasonInvalidEndpointObject (Warning): Options.EndpointURLs cannot read the endpoint
	// object's URLs. The endpoints it listed before are kept; retried when the object changes
	// (and every ResyncPeriod).
	ReasonInvalidEndpointObject = "InvalidEndpointObject"

	// ReasonEndpointReady (Normal): an endpoint that could not be watched is watched now.
	ReasonEndpointReady = "EndpointReady"

	// reasonInvalidEndpointURL is the metric reason of an endpoint URL that is refused: it has
	// user info, a query or a fragment (see ReasonEndpointUnavailable).
	reasonInvalidEndpointURL = "InvalidEndpointURL"

	// reasonInvalidObject is the metric reason of an object without a valid kcp.io/cluster.
	reasonInvalidObject = "InvalidObject"

	// reasonMissedDeletion is the metric reason of an object whose deletion an endpoint's watch
	// missed (deleted while the watch was down, and dropped by the informer's relist), found
	// by the check against a live list after a reconnect or at a resync.
	reasonMissedDeletion = "MissedDeletion"

	// reasonHandlerPanicked is the metric reason of a panic of one of Options.Handlers.
	reasonHandlerPanicked = "HandlerPanicked"
)
