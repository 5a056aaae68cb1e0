// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package sharded_test

import (
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/manager/coordinator/basic"
	"mcr.dev/core/manager/coordinator/sharded"
	"mcr.dev/core/providers/nop"
)

func TestOptionsMapOntoSharding(t *testing.T) {
	defaults := sharded.New(nil, logr.Discard()).Options()
	if defaults.Namespace != "kube-system" || defaults.Group != "mcr-shard" || defaults.LeaseDuration != 20*time.Second ||
		defaults.RenewInterval != 10*time.Second || defaults.RetryPeriod != 750*time.Millisecond {
		t.Errorf("defaults: %+v", defaults)
	}
	got := sharded.New(nil, logr.Discard(),
		sharded.WithShardLease("fleet-system", "my-shards"),
		sharded.WithPeerWeight(3),
		sharded.WithLeaseTimings(30*time.Second, 5*time.Second, time.Second),
		sharded.WithPerClusterLease(true),
		sharded.WithSynchronizationIntervals(time.Second, time.Minute),
	).Options()
	if got.Namespace != "fleet-system" || got.Group != "my-shards" || got.Weight != 3 ||
		got.LeaseDuration != 30*time.Second || got.RenewInterval != 5*time.Second || got.RetryPeriod != time.Second {
		t.Errorf("options: %+v", got)
	}
	if w := sharded.New(nil, logr.Discard(), sharded.WithPeerWeight(0)).Options().Weight; w != 1 {
		t.Errorf("weight 0 gives %v, want 1", w)
	}
}

func newManager(opts mcmanager.Options, c mcmanager.Coordinator) (mcmanager.Manager, error) {
	opts.Metrics = metricsserver.Options{BindAddress: "0"}
	return mcmanager.New(&rest.Config{Host: "https://127.0.0.1:1"}, nop.New(), opts, mcmanager.WithCoordinator(c))
}

// The sharded coordinator turns sharding on (which excludes leader election and validates its
// timings); the basic one changes nothing.
func TestWithCoordinator(t *testing.T) {
	elected := mcmanager.Options{LeaderElection: true, LeaderElectionID: "x", LeaderElectionNamespace: "default"}
	if _, err := newManager(elected, sharded.New(nil, logr.Discard())); err == nil || !strings.Contains(err.Error(), "leader election") {
		t.Errorf("sharded with leader election: got %v, want the sharding error", err)
	}
	bad := sharded.New(nil, logr.Discard(), sharded.WithLeaseTimings(time.Second, 5*time.Second, time.Second))
	if _, err := newManager(mcmanager.Options{}, bad); err == nil {
		t.Error("sharded with a renewal slower than the Lease: no error")
	}
	if _, err := newManager(mcmanager.Options{}, sharded.New(nil, logr.Discard())); err != nil {
		t.Errorf("sharded: %v", err)
	}
	if _, err := newManager(elected, basic.New()); err != nil {
		t.Errorf("basic with leader election: %v", err)
	}
	if _, err := newManager(mcmanager.Options{}, nil); err != nil {
		t.Errorf("nil coordinator: %v", err)
	}
}
