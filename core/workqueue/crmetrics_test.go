// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package workqueue

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/utils/clock"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"mcr.dev/core/reconcile"
)

// metricValue returns the value of the series of family with the given labels in the
// controller-runtime registry, and whether it exists.
func metricValue(t *testing.T, family string, labels map[string]string) (float64, bool) {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != family {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if got[k] != v {
					continue series
				}
			}
			return value(m), true
		}
	}
	return 0, false
}

func value(m *dto.Metric) float64 {
	switch {
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetHistogram() != nil:
		return float64(m.GetHistogram().GetSampleCount())
	}
	return 0
}

func TestDefaultMetricsAreControllerRuntimes(t *testing.T) {
	if defaultMetricsProvider == nil {
		t.Fatal("controller-runtime's workqueue series could not be shared; see newControllerRuntimeMetrics")
	}
	const name = "fair-default-metrics"
	q := newClusterFair[reconcile.Request](name, nil, Options{}, clock.RealClock{})
	defer q.ShutDown()
	q.Add(req("east", "a"))
	q.Add(req("west", "b"))

	labels := map[string]string{"name": name, "controller": name}
	if v, ok := metricValue(t, "workqueue_adds_total", labels); !ok || v != 2 {
		t.Errorf("workqueue_adds_total = %v (present %v), want 2", v, ok)
	}
	if v, ok := metricValue(t, "workqueue_depth", map[string]string{"name": name, "controller": name, "priority": ""}); !ok || v != 2 {
		t.Errorf("workqueue_depth = %v (present %v), want 2", v, ok)
	}
	item, _ := q.Get()
	q.Done(item)
	if v, ok := metricValue(t, "workqueue_depth", labels); !ok || v != 1 {
		t.Errorf("workqueue_depth after one Get = %v (present %v), want 1", v, ok)
	}
	if v, ok := metricValue(t, "workqueue_work_duration_seconds", labels); !ok || v != 1 {
		t.Errorf("workqueue_work_duration_seconds samples = %v (present %v), want 1", v, ok)
	}
}

func TestControllerRuntimeMetricsShareRegisteredSeries(t *testing.T) {
	reg := prometheus.NewRegistry()
	first, err := newControllerRuntimeMetrics(reg)
	if err != nil {
		t.Fatalf("registering in an empty registry: %v", err)
	}
	second, err := newControllerRuntimeMetrics(reg)
	if err != nil {
		t.Fatalf("sharing the registered series: %v", err)
	}
	if first.adds != second.adds || first.depth != second.depth || first.latency != second.latency {
		t.Error("the second provider does not share the first one's collectors")
	}

	clash := prometheus.NewRegistry()
	clash.MustRegister(prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Subsystem: "workqueue", Name: "depth", Help: "described differently",
	}, []string{"name"}))
	if _, err := newControllerRuntimeMetrics(clash); err == nil {
		t.Error("a differently described workqueue_depth was shared instead of reported")
	}
}
