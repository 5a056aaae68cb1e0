// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package manager

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/healthz"

	"mcr.dev/core/multicluster"
)

// ReadyCheckOptions configure FleetReadyCheck. The zero value of every field selects its
// default.
type ReadyCheckOptions struct {
	// MinSyncedShare is the share, from 0 to 1, of the engaged clusters whose controllers must
	// have synced their watches of the cluster.
	//
	// Defaults to 1: every engaged cluster.
	MinSyncedShare float64

	// MinEngagedShare is the share, from 0 to 1, of the members the provider knows (engaged,
	// or found but failing; providers built on the provider kit report the failing ones) that
	// must be engaged. With sharding a replica engages only its share: leave it at 0 there.
	//
	// Defaults to 0: members the provider cannot engage (a broken kubeconfig, an unreachable
	// apiserver) do not hold readiness back; they are named in the check's error instead.
	MinEngagedShare float64

	// Required lists clusters that must be engaged and synced whatever the shares say.
	//
	// Defaults to none.
	Required []multicluster.ClusterName
}

func (o ReadyCheckOptions) withDefaults() ReadyCheckOptions {
	if o.MinSyncedShare <= 0 || o.MinSyncedShare > 1 {
		o.MinSyncedShare = 1
	}
	o.MinEngagedShare = min(max(o.MinEngagedShare, 0), 1)
	return o
}

// SyncReporter is implemented by Awares that can tell whether their watches of an engaged
// cluster have synced: mcr's controllers do. applies is false while the Aware does not run
// (a controller that waits for the leader election).
type SyncReporter interface {
	SyncedFor(name multicluster.ClusterName) (synced, applies bool)
}

// FleetReadyCheck returns a readiness check for mgr.AddReadyzCheck: it passes once the
// provider has synced its first list of members (providers that implement
// multicluster.StatusReporter; others are taken as listed) and the engaged clusters' watches
// have synced as opts ask, so that a new replica of a rolling update reports Ready only once it
// serves the fleet. Its error names what is missing, and the failing members with their
// problem. On a replica that waits for the leader election, controllers that need it do not
// count: the check then says whether the provider and the warmed-up controllers are ready.
func FleetReadyCheck(mgr Manager, opts ReadyCheckOptions) healthz.Checker {
	o := opts.withDefaults()
	return func(*http.Request) error { return FleetReadiness(mgr, o) }
}

// FleetReadiness is FleetReadyCheck's check, for callers outside a health endpoint.
func FleetReadiness(mgr Manager, opts ReadyCheckOptions) error {
	m, ok := mgr.(*mcManager)
	if !ok {
		return fmt.Errorf("fleet readiness: %T is not an mcr manager", mgr)
	}
	return m.readiness(opts.withDefaults())
}

func (m *mcManager) readiness(o ReadyCheckOptions) error {
	var status multicluster.FleetStatus
	reporter, reports := m.provider.(multicluster.StatusReporter)
	if reports {
		status = reporter.FleetStatus()
		if !status.Listed {
			return errors.New("the provider has not synced its first list of members yet")
		}
	}
	m.mu.Lock()
	engaged := make([]multicluster.ClusterName, 0, len(m.engaged))
	for name := range m.engaged {
		engaged = append(engaged, name)
	}
	awares := slices.Clone(m.awares)
	m.mu.Unlock()
	slices.Sort(engaged)

	var unsynced []multicluster.ClusterName
	for _, name := range engaged {
		for _, a := range awares {
			if r, ok := a.(SyncReporter); ok {
				if synced, applies := r.SyncedFor(name); applies && !synced {
					unsynced = append(unsynced, name)
					break
				}
			}
		}
	}
	var problems []string
	if len(engaged) > 0 {
		if share := float64(len(engaged)-len(unsynced)) / float64(len(engaged)); share < o.MinSyncedShare {
			problems = append(problems, fmt.Sprintf("%d of %d engaged clusters are not synced yet: %s",
				len(unsynced), len(engaged), names(unsynced)))
		}
	}
	known := len(engaged)
	for name := range status.Failing {
		if !slices.Contains(engaged, name) {
			known++
		}
	}
	if known > 0 && float64(len(engaged))/float64(known) < o.MinEngagedShare {
		problems = append(problems, fmt.Sprintf("%d of %d members are engaged, fewer than %.0f%%", len(engaged), known, 100*o.MinEngagedShare))
	}
	for _, name := range o.Required {
		switch {
		case !slices.Contains(engaged, name):
			problems = append(problems, fmt.Sprintf("required cluster %q is not engaged", name))
		case slices.Contains(unsynced, name):
			problems = append(problems, fmt.Sprintf("required cluster %q is not synced yet", name))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	if len(status.Failing) > 0 {
		failing := make([]string, 0, len(status.Failing))
		for name, why := range status.Failing {
			failing = append(failing, fmt.Sprintf("%s (%s)", name, why))
		}
		slices.Sort(failing)
		problems = append(problems, "failing members: "+strings.Join(first(failing, 10), "; "))
	}
	return errors.New(strings.Join(problems, "; "))
}

// names lists up to ten names.
func names(list []multicluster.ClusterName) string {
	s := make([]string, len(list))
	for i, n := range list {
		s[i] = string(n)
	}
	return strings.Join(first(s, 10), ", ")
}

func first(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(s[:n:n], fmt.Sprintf("and %d more", len(s)-n))
}
