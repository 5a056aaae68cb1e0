// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package milo

import (
	"mcr.dev/core/providers/kit"
)

// Errors counts failed attempts to engage a ready project, by reason: the Warning Event
// reasons (ClusterSetupFailed, Unauthorized, ClusterUnreachable, EngageFailed). A project that
// stays broken counts again each time it is synced.
//
// BrokenClusters (mcr_milo_provider_broken_projects) is the number of selected, ready
// projects that cannot be engaged at the moment, summed over the Milo providers of the
// process. Alert on it staying above zero.
var Errors, BrokenClusters = kit.RegisterMetrics(providerName, "projects") //nolint:revive // one call creates and registers both

var (
	// BrokenProjects is the former name of BrokenClusters, the same gauge.
	//
	// Deprecated: use BrokenClusters.
	BrokenProjects = BrokenClusters
)
