package kubeconfig

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	// secretErrors counts kubeconfig Secrets that could not be turned into an engaged cluster,
	// by reason (the Reason* constants and kubeconfig.Reason* values). Registered in
	// controller-runtime's registry, so the manager's metrics endpoint serves it.
	secretErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mcr_kubeconfig_provider_errors_total",
		Help: "Kubeconfig Secrets that could not be turned into an engaged cluster, by reason.",
	}, []string{"reason"})

	// brokenClusters is the number of members with an unresolved problem (unreachable, refused
	// credentials, a new kubeconfig that cannot be used), summed over the kubeconfig providers
	// of the process. Alert on it staying above zero.
	brokenClusters = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "mcr_kubeconfig_provider_broken_clusters",
		Help: "Number of members the kubeconfig provider cannot engage (or re-engage) at the moment.",
	})
)

func init() {
	metrics.Registry.MustRegister(secretErrors, brokenClusters)
}
