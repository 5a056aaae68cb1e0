package clusterapi

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	// Errors counts failed attempts to engage a ready Cluster, by reason: the Event reasons
	// below, with InvalidKubeconfig refined into kubeconfig.Reason values (ExecPlugin,
	// AuthProviderPlugin, LocalFileReference, InsecureTLS, InvalidKubeconfig) and
	// MissingKubeconfigData. A Cluster that stays broken counts again each time it is synced.
	Errors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mcr_clusterapi_provider_errors_total",
		Help: "Failed attempts of the Cluster API provider to engage a ready Cluster, by reason.",
	}, []string{"reason"})

	// BrokenClusters is the number of selected, ready Clusters that cannot be engaged at the
	// moment (or whose new kubeconfig cannot be used), summed over the Cluster API providers of
	// the process. Alert on it staying above zero.
	BrokenClusters = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "mcr_clusterapi_provider_broken_clusters",
		Help: "Number of selected, ready Cluster API Clusters the provider cannot engage (or re-engage) at the moment.",
	})
)

func init() {
	ctrlmetrics.Registry.MustRegister(Errors, BrokenClusters)
}
