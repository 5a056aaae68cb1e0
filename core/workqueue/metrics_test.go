// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package workqueue

import (
	"sync"
	"testing"
	"time"

	kworkqueue "k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"mcr.dev/core/internal/testcheck"
	"mcr.dev/core/reconcile"
)

// fakeMetric records every kind of observation. The queue updates gauges from its goroutine, so
// it locks.
type fakeMetric struct {
	mu           sync.Mutex
	value        float64
	observations []float64
}

func (m *fakeMetric) Inc()          { m.mu.Lock(); m.value++; m.mu.Unlock() }
func (m *fakeMetric) Dec()          { m.mu.Lock(); m.value--; m.mu.Unlock() }
func (m *fakeMetric) Set(v float64) { m.mu.Lock(); m.value = v; m.mu.Unlock() }
func (m *fakeMetric) Observe(v float64) {
	m.mu.Lock()
	m.observations = append(m.observations, v)
	m.mu.Unlock()
}

func (m *fakeMetric) get() float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.value
}

func (m *fakeMetric) observed() []float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]float64(nil), m.observations...)
}

type fakeMetricsProvider struct {
	depth, adds, latency, workDuration, unfinished, longest, retries fakeMetric
	names                                                            []string
}

func newFakeMetricsProvider() *fakeMetricsProvider { return &fakeMetricsProvider{} }

func (p *fakeMetricsProvider) NewDepthMetric(name string) kworkqueue.GaugeMetric {
	p.names = append(p.names, name)
	return &p.depth
}
func (p *fakeMetricsProvider) NewAddsMetric(string) kworkqueue.CounterMetric { return &p.adds }
func (p *fakeMetricsProvider) NewLatencyMetric(string) kworkqueue.HistogramMetric {
	return &p.latency
}
func (p *fakeMetricsProvider) NewWorkDurationMetric(string) kworkqueue.HistogramMetric {
	return &p.workDuration
}
func (p *fakeMetricsProvider) NewUnfinishedWorkSecondsMetric(string) kworkqueue.SettableGaugeMetric {
	return &p.unfinished
}
func (p *fakeMetricsProvider) NewLongestRunningProcessorSecondsMetric(string) kworkqueue.SettableGaugeMetric {
	return &p.longest
}
func (p *fakeMetricsProvider) NewRetriesMetric(string) kworkqueue.CounterMetric { return &p.retries }

func TestMetrics(t *testing.T) {
	mp := newFakeMetricsProvider()
	q, clk := newTestQueue(t, Options{MetricsProvider: mp})
	if len(mp.names) != 1 || mp.names[0] != "test" {
		t.Fatalf("metrics created for %v, want the queue's name [test]", mp.names)
	}
	x, y := req("a", "x"), req("b", "y")

	q.Add(x)
	q.Add(x) // deduplicated: not an add
	q.AddAfter(y, time.Second)
	if d, a, r := mp.depth.get(), mp.adds.get(), mp.retries.get(); d != 1 || a != 1 || r != 1 {
		t.Fatalf("depth=%v adds=%v retries=%v, want 1 1 1", d, a, r)
	}

	clk.Step(2 * time.Second)
	if got := mustGet(t, q); got != x {
		t.Fatalf("Get() = %v, want %v", got, x)
	}
	if got := mp.latency.observed(); len(got) != 1 || got[0] != 2 {
		t.Fatalf("latency observations = %v, want [2] (seconds x waited)", got)
	}
	if got := mustGet(t, q); got != y { // y became ready at the step
		t.Fatalf("Get() = %v, want %v", got, y)
	}
	if d, a := mp.depth.get(), mp.adds.get(); d != 0 || a != 2 {
		t.Fatalf("depth=%v adds=%v after two Gets, want 0 2", d, a)
	}

	clk.Step(unfinishedWorkPeriod)
	testcheck.WaitFor(t, "unfinished work to be reported", func() bool { return mp.unfinished.get() > 0 })
	if got, want := mp.longest.get(), unfinishedWorkPeriod.Seconds(); got != want {
		t.Fatalf("longest running processor = %v, want %v", got, want)
	}

	q.Done(x)
	q.Done(y)
	if got := mp.workDuration.observed(); len(got) != 2 || got[0] != unfinishedWorkPeriod.Seconds() {
		t.Fatalf("work durations = %v, want two of %v", got, unfinishedWorkPeriod.Seconds())
	}
}

func TestNoMetricsWithoutProviderOrName(t *testing.T) {
	mp := newFakeMetricsProvider()
	q := newClusterFair[reconcile.Request]("", nil, Options{MetricsProvider: mp}, clock.RealClock{})
	defer q.ShutDown()
	if q.metrics != nil || len(mp.names) != 0 {
		t.Fatal("an unnamed queue must not create metrics")
	}
}
