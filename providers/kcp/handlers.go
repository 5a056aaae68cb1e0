// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kcp

import (
	"fmt"
	"runtime/debug"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kcp-dev/logicalcluster/v3"
)

// Handler is told about the objects of Options.ObjectToWatch (each APIBinding of an APIExport, by
// default): the lifecycle hooks of kcp-dev's multicluster-provider, with the same method set as
// its handlers.Handler, so that a value written for it is a Handler as it is.
//
// For every object with a valid kcp.io/cluster annotation on a running endpoint:
//   - OnAdd when the endpoint's watch lists it: objects that exist when an endpoint starts, and
//     again when an endpoint starts anew (listed again after it was dropped, or retried after
//     its first sync failed), so OnAdd must be idempotent;
//   - OnUpdate with the old and the new object on each change, and on the watch's resyncs;
//   - OnDelete when it is deleted, with its last state (a deletion seen only by a relist, or
//     found by the provider's check against a live list after a reconnect, gives the object
//     of the tombstone; when the watch's delete event races with that check, OnDelete may
//     come twice).
//
// They tell objects, not engagements: they run as the watch sees the object, whether or not its
// logical cluster is ready or engaged (the engagement follows, in the provider's sync). No
// OnDelete is sent for the objects of an endpoint that stops, nor when the provider stops.
//
// They run on the notification goroutine of the endpoint's watch, one call at a time per
// endpoint, in the order of Options.Handlers; endpoints run theirs in parallel. They must not
// block: while a handler runs, the provider sees no change on that endpoint. Hand slow work to a
// queue of your own. The objects are copies, shared by the handlers of one notification: do not
// modify them. A handler that panics is recovered and logged (with the key "cluster"), counted in
// Errors with the reason HandlerPanicked, and the provider and the other handlers carry on.
type Handler interface {
	// OnAdd is called when an endpoint's watch lists a new object.
	OnAdd(obj client.Object)

	// OnUpdate is called when an object changes.
	OnUpdate(oldObj, newObj client.Object)

	// OnDelete is called when an object is deleted.
	OnDelete(obj client.Object)
}

// runHandlers calls call with each of Options.Handlers, recovering from their panics; obj is the
// object of the notification, for the log.
func (p *Provider) runHandlers(ep *endpoint, event string, obj client.Object, call func(Handler)) {
	for _, h := range p.opts.Handlers {
		func() {
			defer func() {
				if r := recover(); r != nil {
					Errors.WithLabelValues(reasonHandlerPanicked).Inc()
					ep.log.Error(fmt.Errorf("panic: %v", r), "A handler panicked; the provider carries on",
						"cluster", logicalcluster.From(obj).String(), "object", obj.GetName(),
						"handler", fmt.Sprintf("%T", h), "event", event, "stack", string(debug.Stack()))
				}
			}()
			call(h)
		}()
	}
}

// copyOf returns a deep copy of obj, so that handlers never hold the shared cache's objects.
func copyOf(obj client.Object) client.Object {
	if c, ok := obj.DeepCopyObject().(client.Object); ok {
		return c
	}
	return obj
}
