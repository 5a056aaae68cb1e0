package kubeconfig

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// secretErrors counts kubeconfig Secrets that could not be turned into an engaged cluster, by
// reason (the Reason* constants and kubeconfig.Reason* values). It is registered in
// controller-runtime's registry, so the manager's metrics endpoint serves it.
var secretErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "mcr_kubeconfig_provider_errors_total",
	Help: "Kubeconfig Secrets that could not be turned into an engaged cluster, by reason.",
}, []string{"reason"})

func init() {
	metrics.Registry.MustRegister(secretErrors)
}
