// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kubeconfig

import (
	"mcr.dev/core/providers/kit"
)

// Errors (mcr_kubeconfig_provider_errors_total) counts kubeconfig Secrets that could not be
// turned into an engaged cluster, by reason (the Reason* constants and kubeconfig.Reason*
// values); BrokenClusters (mcr_kubeconfig_provider_broken_clusters) is the number of members
// with an unresolved problem, summed over the kubeconfig providers of the process. Both are
// served by the manager's metrics endpoint.
var Errors, BrokenClusters = kit.RegisterMetrics(providerName, "clusters") //nolint:revive // one call creates and registers both
