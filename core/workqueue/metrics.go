// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package workqueue

import (
	"time"

	kworkqueue "k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
)

// unfinishedWorkPeriod is how often the unfinished-work gauges are refreshed, as in client-go.
const unfinishedWorkPeriod = 500 * time.Millisecond

// queueMetrics records the standard client-go workqueue metrics. A nil *queueMetrics records
// nothing, which keeps the default (no provider) free of bookkeeping. The queue's lock guards it.
type queueMetrics[request comparable] struct {
	clock clock.PassiveClock

	depth          kworkqueue.GaugeMetric
	adds           kworkqueue.CounterMetric
	latency        kworkqueue.HistogramMetric
	workDuration   kworkqueue.HistogramMetric
	unfinishedWork kworkqueue.SettableGaugeMetric
	longestRunning kworkqueue.SettableGaugeMetric
	retries        kworkqueue.CounterMetric

	queuedAt  map[request]time.Time
	startedAt map[request]time.Time
}

// newQueueMetrics returns nil (no metrics) without a provider or a name, like client-go.
func newQueueMetrics[request comparable](provider kworkqueue.MetricsProvider, name string, clk clock.PassiveClock) *queueMetrics[request] {
	if provider == nil || name == "" {
		return nil
	}
	return &queueMetrics[request]{
		clock:          clk,
		depth:          provider.NewDepthMetric(name),
		adds:           provider.NewAddsMetric(name),
		latency:        provider.NewLatencyMetric(name),
		workDuration:   provider.NewWorkDurationMetric(name),
		unfinishedWork: provider.NewUnfinishedWorkSecondsMetric(name),
		longestRunning: provider.NewLongestRunningProcessorSecondsMetric(name),
		retries:        provider.NewRetriesMetric(name),
		queuedAt:       map[request]time.Time{},
		startedAt:      map[request]time.Time{},
	}
}

// add records a request that is due for processing: ready, or parked behind its own processing.
func (m *queueMetrics[request]) add(item request) {
	if m == nil {
		return
	}
	m.adds.Inc()
	m.depth.Inc()
	if _, ok := m.queuedAt[item]; !ok {
		m.queuedAt[item] = m.clock.Now()
	}
}

// get records a request handed out to a worker.
func (m *queueMetrics[request]) get(item request) {
	if m == nil {
		return
	}
	now := m.clock.Now()
	m.depth.Dec()
	m.startedAt[item] = now
	if at, ok := m.queuedAt[item]; ok {
		m.latency.Observe(now.Sub(at).Seconds())
		delete(m.queuedAt, item)
	}
}

// done records the end of a request's processing.
func (m *queueMetrics[request]) done(item request) {
	if m == nil {
		return
	}
	if at, ok := m.startedAt[item]; ok {
		m.workDuration.Observe(m.clock.Since(at).Seconds())
		delete(m.startedAt, item)
	}
}

// retry records a delayed add.
func (m *queueMetrics[request]) retry() {
	if m == nil {
		return
	}
	m.retries.Inc()
}

// updateUnfinishedWork refreshes the gauges of work in progress.
func (m *queueMetrics[request]) updateUnfinishedWork() {
	if m == nil {
		return
	}
	now := m.clock.Now()
	var total, longest float64
	for _, at := range m.startedAt {
		age := now.Sub(at).Seconds()
		total += age
		longest = max(longest, age)
	}
	m.unfinishedWork.Set(total)
	m.longestRunning.Set(longest)
}
