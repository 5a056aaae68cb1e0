// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterapi

import (
	"mcr.dev/core/providers/kit"
)

// Errors (mcr_clusterapi_provider_errors_total) counts failed attempts to engage a ready
// Cluster, by reason: the Event reasons, with InvalidKubeconfig refined into kubeconfig.Reason
// values (ExecPlugin, AuthProviderPlugin, LocalFileReference, InsecureTLS, InvalidKubeconfig)
// and MissingKubeconfigData. A Cluster that stays broken counts again each time it is synced.
//
// BrokenClusters (mcr_clusterapi_provider_broken_clusters) is the number of selected, ready
// Clusters that cannot be engaged at the moment (or whose new kubeconfig cannot be used), summed
// over the Cluster API providers of the process. Alert on it staying above zero.
var Errors, BrokenClusters = kit.RegisterMetrics(providerName, "clusters") //nolint:revive // one call creates and registers both
