// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterprofile

import (
	"github.com/prometheus/client_golang/prometheus"

	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"mcr.dev/core/providers/kit"
)

// Errors counts failed attempts to engage a ready ClusterProfile, by reason: the Warning
// Event reasons, with InvalidKubeconfig and InvalidAccessProvider refined into
// kubeconfig.Reason values (ExecPlugin, ExecEnv, AuthProviderPlugin, LocalFileReference,
// InsecureTLS, PlainHTTP, ProxyURL, URLData, InvalidKubeconfig), MissingKubeconfigData and AmbiguousKubeconfigSecrets. A profile that
// stays broken counts again each time it is synced.
//
// BrokenClusters is the number of selected, ready ClusterProfiles that cannot be engaged at
// the moment (or whose new credentials cannot be used), summed over the ClusterProfile
// providers of the process. Alert on it staying above zero.
var Errors, BrokenClusters = kit.RegisterMetrics(providerName, "clusters") //nolint:revive // one call creates and registers both

var (
	// UnreadyEngagedClusters is the number of engaged clusters whose ClusterProfile is not
	// ready and that will be disengaged when Options.UnreadyGracePeriod ends, summed over the
	// providers of the process.
	UnreadyEngagedClusters = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "mcr_clusterprofile_provider_unready_engaged_clusters",
		Help: "Number of engaged clusters whose ClusterProfile is unready, within their grace period.",
	})
)

func init() {
	ctrlmetrics.Registry.MustRegister(UnreadyEngagedClusters)
}
