// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package fleet

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"mcr.dev/core/multicluster"
)

// PartialError reports the clusters where a fleet-wide operation failed while it succeeded in
// the others: Reader.List returns the objects of the clusters it could read with it, and
// Reader.AddEventHandler the registration, which delivers the events of the other clusters.
// Get it with errors.As; errors.Is sees the clusters' errors (context.DeadlineExceeded for a
// cluster that did not answer within Options.ClusterTimeout).
type PartialError struct {
	// Action says what failed: "listing *v1.ConfigMapList".
	Action string
	// Errors holds, for each cluster where the action failed, why, with URLs redacted.
	Errors map[multicluster.ClusterName]error
	// Clusters is the number of clusters the action was tried in.
	Clusters int
}

// maxNamed bounds how many clusters the message of a PartialError names.
const maxNamed = 10

func (e *PartialError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "fleet: %s: failed in %d of %d clusters: ", e.Action, len(e.Errors), e.Clusters)
	for i, name := range e.Failed() {
		if i == maxNamed {
			fmt.Fprintf(&b, "; and %d more", len(e.Errors)-maxNamed)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "cluster %q: %v", name, e.Errors[name])
	}
	return b.String()
}

// Unwrap returns the clusters' errors, in the order of their names.
func (e *PartialError) Unwrap() []error {
	errs := make([]error, 0, len(e.Errors))
	for _, name := range e.Failed() {
		errs = append(errs, e.Errors[name])
	}
	return errs
}

// Failed returns the names of the clusters where the action failed, sorted.
func (e *PartialError) Failed() []multicluster.ClusterName {
	return slices.Sorted(maps.Keys(e.Errors))
}
