// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package workqueue

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	kworkqueue "k8s.io/client-go/util/workqueue"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// controllerRuntimeMetrics reports a queue's metrics in the series controller-runtime's own
// queues use (workqueue_depth, workqueue_adds_total, ... labeled name and controller), so that
// dashboards and alerts written for controller-runtime see cluster-fair queues too.
//
// controller-runtime keeps its collectors unexported; registering collectors that describe the
// same series in its registry returns the registered ones (prometheus.AlreadyRegisteredError),
// which this provider then shares. If controller-runtime ever describes them differently,
// registration fails and newControllerRuntimeMetrics says so instead of reporting two series.
type controllerRuntimeMetrics struct {
	depth          *prometheus.GaugeVec
	adds           *prometheus.CounterVec
	latency        *prometheus.HistogramVec
	workDuration   *prometheus.HistogramVec
	unfinishedWork *prometheus.GaugeVec
	longestRunning *prometheus.GaugeVec
	retries        *prometheus.CounterVec
}

var _ kworkqueue.MetricsProvider = &controllerRuntimeMetrics{}

// The help texts must equal controller-runtime's: they are part of a series' identity.
func newControllerRuntimeMetrics(reg prometheus.Registerer) (*controllerRuntimeMetrics, error) {
	const subsystem = "workqueue"
	labels := []string{"name", "controller"}
	buckets := prometheus.ExponentialBuckets(10e-9, 10, 12)
	var errs []error
	m := &controllerRuntimeMetrics{
		depth: shared(reg, &errs, prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Subsystem: subsystem, Name: "depth",
			Help: "Current depth of workqueue by workqueue and priority",
		}, []string{"name", "controller", "priority"})),
		adds: shared(reg, &errs, prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: subsystem, Name: "adds_total",
			Help: "Total number of adds handled by workqueue",
		}, labels)),
		latency: shared(reg, &errs, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: subsystem, Name: "queue_duration_seconds", Buckets: buckets,
			Help: "How long in seconds an item stays in workqueue before being requested",
		}, labels)),
		workDuration: shared(reg, &errs, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: subsystem, Name: "work_duration_seconds", Buckets: buckets,
			Help: "How long in seconds processing an item from workqueue takes.",
		}, labels)),
		unfinishedWork: shared(reg, &errs, prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Subsystem: subsystem, Name: "unfinished_work_seconds",
			Help: "How many seconds of work has been done that " +
				"is in progress and hasn't been observed by work_duration. Large " +
				"values indicate stuck threads. One can deduce the number of stuck " +
				"threads by observing the rate at which this increases.",
		}, labels)),
		longestRunning: shared(reg, &errs, prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Subsystem: subsystem, Name: "longest_running_processor_seconds",
			Help: "How many seconds has the longest running " +
				"processor for workqueue been running.",
		}, labels)),
		retries: shared(reg, &errs, prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: subsystem, Name: "retries_total",
			Help: "Total number of items added to the workqueue with a non-zero delay (rate-limited requeues, explicit RequeueAfter or AddAfter calls)",
		}, labels)),
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("sharing controller-runtime's workqueue metrics: %w", err)
	}
	return m, nil
}

// shared registers c, or returns the collector already registered for the same series.
func shared[C prometheus.Collector](reg prometheus.Registerer, errs *[]error, c C) C {
	err := reg.Register(c)
	if err == nil {
		return c
	}
	var already prometheus.AlreadyRegisteredError
	if errors.As(err, &already) {
		if existing, ok := already.ExistingCollector.(C); ok {
			return existing
		}
	}
	*errs = append(*errs, err)
	return c
}

// defaultMetricsProvider is the provider of queues whose Options leave MetricsProvider nil: the
// controller-runtime series, or none when they cannot be shared. controller-runtime registers its
// collectors in the init of a package that this one imports (through priorityqueue), so they are
// registered first and shared here.
var defaultMetricsProvider = func() kworkqueue.MetricsProvider {
	m, err := newControllerRuntimeMetrics(ctrlmetrics.Registry)
	if err != nil {
		return nil
	}
	return m
}()

func (m *controllerRuntimeMetrics) NewDepthMetric(name string) kworkqueue.GaugeMetric {
	return m.depth.WithLabelValues(name, name, "")
}

func (m *controllerRuntimeMetrics) NewAddsMetric(name string) kworkqueue.CounterMetric {
	return m.adds.WithLabelValues(name, name)
}

func (m *controllerRuntimeMetrics) NewLatencyMetric(name string) kworkqueue.HistogramMetric {
	return m.latency.WithLabelValues(name, name)
}

func (m *controllerRuntimeMetrics) NewWorkDurationMetric(name string) kworkqueue.HistogramMetric {
	return m.workDuration.WithLabelValues(name, name)
}

func (m *controllerRuntimeMetrics) NewUnfinishedWorkSecondsMetric(name string) kworkqueue.SettableGaugeMetric {
	return m.unfinishedWork.WithLabelValues(name, name)
}

func (m *controllerRuntimeMetrics) NewLongestRunningProcessorSecondsMetric(name string) kworkqueue.SettableGaugeMetric {
	return m.longestRunning.WithLabelValues(name, name)
}

func (m *controllerRuntimeMetrics) NewRetriesMetric(name string) kworkqueue.CounterMetric {
	return m.retries.WithLabelValues(name, name)
}
