// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package manager_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
)

// statusProvider reports a FleetStatus the test sets.
type statusProvider struct {
	mu     sync.Mutex
	status multicluster.FleetStatus
}

func (p *statusProvider) Get(context.Context, multicluster.ClusterName) (cluster.Cluster, error) {
	return nil, multicluster.ErrClusterNotFound
}

func (p *statusProvider) IndexField(context.Context, client.Object, string, client.IndexerFunc) error {
	return nil
}

func (p *statusProvider) FleetStatus() multicluster.FleetStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.status
}

func (p *statusProvider) set(st multicluster.FleetStatus) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.status = st
}

// syncProbe is a probe that reports, per cluster, whether its watches have synced.
type syncProbe struct {
	*probe
	mu      sync.Mutex
	running bool
	synced  map[multicluster.ClusterName]bool
}

func (p *syncProbe) SyncedFor(name multicluster.ClusterName) (bool, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.synced[name], p.running
}

func (p *syncProbe) set(name multicluster.ClusterName, synced bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.synced[name] = synced
}

// TestFleetReadiness checks the aggregation of FleetReadyCheck: the provider's first list, the
// synced share of engaged clusters, controllers that do not run, the engaged share of known
// members, and required clusters. The controller tests run it with real controllers.
func TestFleetReadiness(t *testing.T) {
	p := &statusProvider{}
	mgr := newManager(t, p)
	ctrl := &syncProbe{probe: newProbe(nil), running: true, synced: map[multicluster.ClusterName]bool{}}
	if err := mgr.Add(ctrl); err != nil {
		t.Fatal(err)
	}
	check := func(opts mcmanager.ReadyCheckOptions, want ...string) {
		t.Helper()
		err := mcmanager.FleetReadiness(mgr, opts)
		if len(want) == 0 {
			if err != nil {
				t.Errorf("not ready: %v", err)
			}
			return
		}
		if err == nil {
			t.Errorf("ready, want an error containing %q", want)
			return
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q does not contain %q", err, w)
			}
		}
	}

	check(mcmanager.ReadyCheckOptions{}, "has not synced its first list")
	p.set(multicluster.FleetStatus{Listed: true, Failing: map[multicluster.ClusterName]string{"broken": "InvalidKubeconfig: no server"}})
	check(mcmanager.ReadyCheckOptions{}) // nothing engaged, and the failing member does not count by default
	check(mcmanager.ReadyCheckOptions{MinEngagedShare: 0.5}, "0 of 1 members are engaged", "broken (InvalidKubeconfig: no server)")

	for _, name := range []multicluster.ClusterName{"a", "b"} {
		if err := mgr.Engage(context.Background(), name, newCluster(t)); err != nil {
			t.Fatal(err)
		}
	}
	check(mcmanager.ReadyCheckOptions{}, "2 of 2 engaged clusters are not synced yet: a, b")
	ctrl.set("a", true)
	check(mcmanager.ReadyCheckOptions{}, "1 of 2 engaged clusters are not synced yet: b")
	check(mcmanager.ReadyCheckOptions{MinSyncedShare: 0.5})
	check(mcmanager.ReadyCheckOptions{MinSyncedShare: 0.5, Required: []multicluster.ClusterName{"b"}}, `required cluster "b" is not synced yet`)
	check(mcmanager.ReadyCheckOptions{MinSyncedShare: 0.5, Required: []multicluster.ClusterName{"c"}}, `required cluster "c" is not engaged`)
	ctrl.set("b", true)
	check(mcmanager.ReadyCheckOptions{})
	check(mcmanager.ReadyCheckOptions{MinEngagedShare: 1}, "2 of 3 members are engaged")

	// A controller that does not run (it waits for the leader election) does not count.
	ctrl.set("b", false)
	ctrl.mu.Lock()
	ctrl.running = false
	ctrl.mu.Unlock()
	check(mcmanager.ReadyCheckOptions{})
}
