package kcp

import (
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// EventSource is the reporting controller of the Events the provider records on the
// APIExportEndpointSlice.
const EventSource = "mcr.dev/kcp-provider"

// Reasons of the Events the provider records on the APIExportEndpointSlice, and of its Errors
// metric.
const (
	// ReasonEndpointUnavailable (Warning): an endpoint of the slice cannot be watched (not
	// reachable, not serving the watched type, access refused, not synced within
	// Options.CacheSyncTimeout). Retried with backoff; recorded when the problem appears or
	// changes.
	ReasonEndpointUnavailable = "EndpointUnavailable"

	// ReasonEndpointReady (Normal): an endpoint that could not be watched is watched now.
	ReasonEndpointReady = "EndpointReady"

	// reasonEngageFailed is the metric reason of a logical cluster that cannot be engaged.
	reasonEngageFailed = "EngageFailed"

	// reasonInvalidObject is the metric reason of an object without a valid kcp.io/cluster.
	reasonInvalidObject = "InvalidObject"
)

// eventAction is the action of every Event the provider records.
const eventAction = "Watch"

// maxNoteBytes is the limit the events.k8s.io API puts on an Event's note.
const maxNoteBytes = 1024

// event records an Event on the slice.
func (p *Provider) event(slice client.Object, eventType, reason, note string) {
	if p.recorder == nil || slice == nil {
		return
	}
	if len(note) > maxNoteBytes {
		note = note[:maxNoteBytes-3] + "..."
	}
	p.recorder.Eventf(slice, nil, eventType, reason, eventAction, "%s", note)
}
