package metrics_test

import "mcr.dev/core/metrics"

// A fleet of up to 500 members gets latency series for every member: at most 30 × 501 series
// per controller. Call it before the manager starts.
func ExampleSetClusterLatencyOptions() {
	metrics.SetClusterLatencyOptions(metrics.ClusterLatencyOptions{MaxClusters: 500})
}
