package kit

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// NewMetrics returns the two metrics an Engine reports for a provider, named the same way for
// every provider: the errors counter mcr_<name>_errors_total{reason} (every failed attempt,
// by reason) and the gauge mcr_<name>_broken_<members> (members with an unresolved problem;
// alert on it staying above zero). name is EngineOptions.Name, e.g. "kind-provider" (dashes
// become underscores); members names what is counted, e.g. "clusters". Pass them as
// EngineOptions.Errors and EngineOptions.Broken, and register them once per process, e.g. with
// controller-runtime's metrics.Registry in the provider's init.
func NewMetrics(name, members string) (errs *prometheus.CounterVec, broken prometheus.Gauge) {
	prefix := "mcr_" + strings.ReplaceAll(name, "-", "_")
	who := strings.ReplaceAll(name, "-", " ")
	errs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: prefix + "_errors_total",
		Help: "Failed attempts of the " + who + " to engage a member, by reason.",
	}, []string{"reason"})
	broken = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: prefix + "_broken_" + members,
		Help: "Number of " + members + " the " + who + " cannot engage (or re-engage) at the moment.",
	})
	return errs, broken
}
