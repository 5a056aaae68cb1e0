// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package providertest

import (
	"context"
	"fmt"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// EventNotes returns the notes of the Events of reason about target, read with c from the
// namespace ns.
func EventNotes(ctx context.Context, c client.Reader, ns string, target EventTarget, reason string) ([]string, error) {
	var list eventsv1.EventList
	if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	var notes []string
	for _, e := range list.Items {
		if target.matches(e) && e.Reason == reason {
			notes = append(notes, e.Note)
		}
	}
	return notes, nil
}

// WaitEvent waits up to timeout for an Event of reason about target, read with c from the
// namespace ns, whose note contains every part, and returns that note.
func WaitEvent(t testing.TB, c client.Reader, ns string, target EventTarget, reason string, timeout time.Duration, parts ...string) string {
	t.Helper()
	var found string
	Eventually(t, timeout, fmt.Sprintf("Event %s on %s %s", reason, target.Kind, target.Name), func() error {
		notes, err := EventNotes(t.Context(), c, ns, target, reason)
		if err != nil {
			return err
		}
		for _, n := range notes {
			if containsAll(n, parts) {
				found = n
				return nil
			}
		}
		return fmt.Errorf("no matching Event; notes of reason %s: %q", reason, notes)
	})
	return found
}
