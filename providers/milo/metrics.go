package milo

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	// Errors counts failed attempts to engage a ready project, by reason: the Warning Event
	// reasons (ClusterSetupFailed, Unauthorized, ClusterUnreachable, EngageFailed). A project that
	// stays broken counts again each time it is synced.
	Errors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mcr_milo_provider_errors_total",
		Help: "Failed attempts of the Milo provider to engage a ready project, by reason.",
	}, []string{"reason"})

	// BrokenProjects is the number of selected, ready projects that cannot be engaged at the
	// moment, summed over the Milo providers of the process. Alert on it staying above zero.
	BrokenProjects = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "mcr_milo_provider_broken_projects",
		Help: "Number of selected, ready Milo projects the provider cannot engage at the moment.",
	})
)

func init() {
	ctrlmetrics.Registry.MustRegister(Errors, BrokenProjects)
}
