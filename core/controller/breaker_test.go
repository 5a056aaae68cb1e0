// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package controller_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	mccontroller "mcr.dev/core/controller"
	"mcr.dev/core/internal/testcheck"
	"mcr.dev/core/metrics"
	"mcr.dev/core/providers/providertest"
	mcreconcile "mcr.dev/core/reconcile"
	"mcr.dev/core/workqueue"
)

// failingMember reconciles ConfigMaps of its namespace by reading them from the member: from
// "good" with admin credentials, from "bad" with credentials that may read nothing, so every
// reconcile of "bad" fails with the API server's Forbidden.
type failingMember struct {
	ns        string
	good, bad client.Client

	mu          sync.Mutex
	reconciled  map[string]bool
	badAttempts int
	errs        []string
}

func (r *failingMember) Reconcile(ctx context.Context, req mcreconcile.Request) (mcreconcile.Result, error) {
	if req.Namespace != r.ns {
		return mcreconcile.Result{}, nil
	}
	switch req.ClusterName {
	case "good":
		if err := r.good.Get(ctx, req.NamespacedName, &corev1.ConfigMap{}); err != nil {
			return mcreconcile.Result{}, err
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		r.reconciled[req.Name] = true
	case "bad":
		r.mu.Lock()
		r.badAttempts++
		r.mu.Unlock()
		err := r.bad.Get(ctx, req.NamespacedName, &corev1.ConfigMap{})
		if !apierrors.IsForbidden(err) {
			r.mu.Lock()
			r.errs = append(r.errs, fmt.Sprintf("reading %s from bad: %v, want Forbidden", req.NamespacedName, err))
			r.mu.Unlock()
		}
		return mcreconcile.Result{}, fmt.Errorf("reading %s: %w", req.NamespacedName, err)
	}
	return mcreconcile.Result{}, nil
}

func (r *failingMember) attempts() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.badAttempts
}

func (r *failingMember) waitFor(t *testing.T, name string) {
	t.Helper()
	testcheck.WaitFor(t, "a reconcile of "+name+" in cluster good", func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		if len(r.errs) > 0 {
			t.Fatalf("reconciler: %v", r.errs)
		}
		return r.reconciled[name]
	})
}

// One member's reconciles always fail with API errors: its breaker opens (the metric says so
// and a line is logged with the cluster), its requests are held back, and the other member
// keeps being reconciled. Per-cluster latency series exist for both members, and everything
// labeled with the failing member is deleted when it is disengaged.
func TestBreakerParksFailingMember(t *testing.T) {
	ns := namespace(t, "a", "b")
	badClient, err := client.New(forbiddenConfig(t, "b"), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec := &failingMember{ns: ns, good: memberClient(t, "a"), bad: badClient, reconciled: map[string]bool{}}
	logs := &providertest.LogBuffer{}
	name := "breaker-" + ns

	mgr := newManager(t, nil)
	c, err := mccontroller.New(name, mgr, mccontroller.Options{
		Reconciler: rec,
		NewQueue: workqueue.ClusterFairQueue[mcreconcile.Request](workqueue.Options{
			// An hour: once open, the breaker lets nothing of "bad" through while the test runs.
			Breaker: &workqueue.BreakerOptions{FailureThreshold: 3, InitialBackoff: time.Hour},
			Logger:  logs.Logger(),
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.MultiClusterWatch(configMaps()); err != nil {
		t.Fatal(err)
	}
	runManager(t, mgr)
	if err := mgr.Engage(t.Context(), "good", startedCluster(t, fleet.Member("a").Config())); err != nil {
		t.Fatal(err)
	}
	badCtx, disengageBad := context.WithCancel(t.Context())
	defer disengageBad()
	if err := mgr.Engage(badCtx, "bad", startedCluster(t, fleet.Member("b").Config())); err != nil {
		t.Fatal(err)
	}

	createConfigMap(t, "b", ns, "cm-0")
	createConfigMap(t, "b", ns, "cm-1")
	testcheck.WaitFor(t, "the breaker of bad to open", func() bool {
		m := series(t, "mcr_cluster_breaker_state", name, "bad", "state", metrics.BreakerOpen)
		return m != nil && m.GetGauge().GetValue() == 1
	})
	if notLogged(logs, `"cluster"="bad"`, "circuit breaker opened", `"failures"=3`) {
		t.Fatalf("the opening was not logged with the cluster:\n%s", logs)
	}
	parkedAt := rec.attempts()
	if parkedAt < 3 {
		t.Fatalf("%d reconciles of bad before its breaker opened, want at least 3", parkedAt)
	}

	// The healthy member goes on; the failing one, with new events too, waits.
	createConfigMap(t, "b", ns, "cm-late")
	for i := range 5 {
		cm := fmt.Sprint("cm-", i)
		createConfigMap(t, "a", ns, cm)
		rec.waitFor(t, cm)
	}
	if n := rec.attempts(); n != parkedAt {
		t.Fatalf("bad was reconciled %d times while its breaker was open", n-parkedAt)
	}

	for _, metric := range []string{"mcr_reconcile_duration_seconds", "mcr_queue_wait_seconds"} {
		for _, cluster := range []string{"good", "bad"} {
			if m := series(t, metric, name, cluster); m == nil || m.GetHistogram().GetSampleCount() == 0 {
				t.Errorf("%s{controller=%q,cluster=%q}: no observations", metric, name, cluster)
			}
		}
	}

	disengageBad()
	labeled := []string{"mcr_cluster_breaker_state", "mcr_cluster_breaker_transitions_total", "mcr_reconcile_total",
		"mcr_reconcile_duration_seconds", "mcr_queue_wait_seconds"}
	testcheck.WaitFor(t, "the series of bad to be deleted", func() bool {
		for _, metric := range labeled {
			if series(t, metric, name, "bad") != nil {
				return false
			}
		}
		return true
	})
	if series(t, "mcr_reconcile_duration_seconds", name, "good") == nil {
		t.Fatal("disengaging bad deleted the series of good")
	}
}

// series returns the first series of the metric with the controller and cluster labels (and
// the further label name and value pairs of more) in controller-runtime's registry, the one the
// metrics endpoint serves, or nil.
func series(t *testing.T, metric, controller, cluster string, more ...string) *dto.Metric {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != metric {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			want := map[string]string{"controller": controller, "cluster": cluster}
			for i := 0; i+1 < len(more); i += 2 {
				want[more[i]] = more[i+1]
			}
			for _, l := range m.GetLabel() {
				if v, ok := want[l.GetName()]; ok && v != l.GetValue() {
					continue next
				}
			}
			return m
		}
	}
	return nil
}
