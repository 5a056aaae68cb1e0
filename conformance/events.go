// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// EventTexts returns the reason, note and message of every Event in namespace (all
// namespaces if empty) that c can read, of both Event APIs (events.k8s.io/v1 and core v1), one
// line per Event: what a ReportSource adds to the provider's log lines. c's scheme must hold
// both APIs (client-go's scheme does).
func EventTexts(ctx context.Context, c client.Client, namespace string) ([]string, error) {
	var lines []string
	events := &eventsv1.EventList{}
	if err := c.List(ctx, events, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("listing events.k8s.io Events: %w", err)
	}
	for _, e := range events.Items {
		lines = append(lines, fmt.Sprintf("Event %s/%s %s %s: %s (regarding %s %s)", e.Namespace, e.Name, e.Type, e.Reason, e.Note,
			e.Regarding.Kind, e.Regarding.Name))
	}
	legacy := &corev1.EventList{}
	if err := c.List(ctx, legacy, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("listing core Events: %w", err)
	}
	for _, e := range legacy.Items {
		lines = append(lines, fmt.Sprintf("Event %s/%s %s %s: %s (regarding %s %s)", e.Namespace, e.Name, e.Type, e.Reason, e.Message,
			e.InvolvedObject.Kind, e.InvolvedObject.Name))
	}
	return lines, nil
}
