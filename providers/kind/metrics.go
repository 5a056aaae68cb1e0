// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kind

import (
	"mcr.dev/core/providers/kit"
)

// Errors counts failed attempts to engage a kind cluster, by reason (the kit's reasons:
// ClusterUnreachable, Unauthorized, InvalidKubeconfig, ...), as
// mcr_kind_provider_errors_total{reason}; BrokenClusters is the number of kind clusters that
// cannot be engaged at the moment, mcr_kind_provider_broken_clusters. Both are summed over the
// kind providers of the process.
var Errors, BrokenClusters = kit.RegisterMetrics(providerName, "clusters") //nolint:revive // one call creates and registers both
