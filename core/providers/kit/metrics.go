// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kit

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// NewErrorsMetric and NewBrokenMetric return the two metrics an Engine reports for a provider
// (EngineOptions.Errors and EngineOptions.Broken), named the same way for every provider:
// mcr_<name>_errors_total{reason} counts every failed attempt by reason, and
// mcr_<name>_broken_<members> is the number of members with an unresolved problem (alert on it
// staying above zero). name is EngineOptions.Name, e.g. "kind-provider" (dashes become
// underscores); members names what is counted, e.g. "clusters". Register them once per process,
// e.g. with controller-runtime's metrics.Registry in the provider's init.
func NewErrorsMetric(name string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: metricPrefix(name) + "_errors_total",
		Help: "Failed attempts of the " + strings.ReplaceAll(name, "-", " ") + " to engage a member, by reason.",
	}, []string{"reason"})
}

// NewBrokenMetric returns the gauge of members with an unresolved problem; see NewErrorsMetric.
func NewBrokenMetric(name, members string) prometheus.Gauge {
	return prometheus.NewGauge(prometheus.GaugeOpts{
		Name: metricPrefix(name) + "_broken_" + members,
		Help: "Number of " + strings.ReplaceAll(members, "_", " ") + " the " + strings.ReplaceAll(name, "-", " ") +
			" cannot engage (or re-engage) at the moment.",
	})
}

func metricPrefix(name string) string { return "mcr_" + strings.ReplaceAll(name, "-", "_") }
