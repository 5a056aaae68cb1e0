// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package metrics_test

import "mcr.dev/core/metrics"

// A fleet of up to 500 members gets per-cluster series for every member: at most 40 × 501
// series per controller. Call it before the manager starts.
func ExampleSetClusterSeriesOptions() {
	metrics.SetClusterSeriesOptions(metrics.ClusterSeriesOptions{MaxClusters: 500})
}
