// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kit

import (
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// RegisterMetrics returns the two metrics an Engine reports for a provider (EngineOptions.Errors
// and EngineOptions.Broken), named the same way for every provider, registered with
// controller-runtime's metrics.Registry: mcr_<name>_errors_total{reason} counts every failed
// attempt by reason, and mcr_<name>_broken_<members> is the number of members with an unresolved
// problem (alert on it staying above zero). name is EngineOptions.Name, e.g. "kind-provider"
// (dashes become underscores); members names what is counted, e.g. "clusters". Call it once per
// process, in a package-level var of the provider:
//
//	var Errors, BrokenClusters = kit.RegisterMetrics(providerName, "clusters") //nolint:revive // one call, two metrics
//
// An Engine of that name reports to them unless its EngineOptions name others.
func RegisterMetrics(name, members string) (*prometheus.CounterVec, prometheus.Gauge) {
	errs, broken := newMetrics(name, members)
	ctrlmetrics.Registry.MustRegister(errs, broken)
	registered.Store(name, engineMetrics{errs, broken})
	return errs, broken
}

// registered holds the engineMetrics RegisterMetrics registered, by provider name.
var registered sync.Map

type engineMetrics struct {
	errors *prometheus.CounterVec
	broken prometheus.Gauge
}

// registeredMetrics returns the metrics RegisterMetrics registered under name, nil when none.
func registeredMetrics(name string) (*prometheus.CounterVec, prometheus.Gauge) {
	m, ok := registered.Load(name)
	if !ok {
		return nil, nil
	}
	return m.(engineMetrics).errors, m.(engineMetrics).broken
}

// newMetrics returns the metrics of RegisterMetrics without registering them.
func newMetrics(name, members string) (*prometheus.CounterVec, prometheus.Gauge) {
	prefix := "mcr_" + strings.ReplaceAll(name, "-", "_")
	errs := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: prefix + "_errors_total",
		Help: "Failed attempts of the " + strings.ReplaceAll(name, "-", " ") + " to engage a member, by reason.",
	}, []string{"reason"})
	broken := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: prefix + "_broken_" + members,
		Help: "Number of " + strings.ReplaceAll(members, "_", " ") + " the " + strings.ReplaceAll(name, "-", " ") +
			" cannot engage (or re-engage) at the moment.",
	})
	return errs, broken
}
