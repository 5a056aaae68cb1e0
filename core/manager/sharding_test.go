// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package manager_test

import (
	"strings"
	"testing"

	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/providers/nop"
	"mcr.dev/core/sharding"
)

// Multi-replica behavior is tested against real API servers in package sharding; these tests
// cover how the manager wires the options.

func newShardedManager(opts mcmanager.Options, shardingOpts sharding.Options) (mcmanager.Manager, error) {
	opts.Metrics = metricsserver.Options{BindAddress: "0"}
	return mcmanager.New(&rest.Config{Host: "https://127.0.0.1:1"}, nop.New(), opts, mcmanager.WithSharding(shardingOpts))
}

func TestShardingExcludesLeaderElection(t *testing.T) {
	_, err := newShardedManager(mcmanager.Options{LeaderElection: true, LeaderElectionID: "x"}, sharding.Options{Group: "g"})
	if err == nil || !strings.Contains(err.Error(), "leader election") {
		t.Fatalf("New with sharding and leader election: got %v, want an error about leader election", err)
	}
}

func TestShardingGroupDefaultsToLeaderElectionID(t *testing.T) {
	if _, err := newShardedManager(mcmanager.Options{}, sharding.Options{}); err == nil || !strings.Contains(err.Error(), "Group") {
		t.Fatalf("New with sharding and neither Group nor LeaderElectionID: got %v, want an error about Group", err)
	}
	if _, err := newShardedManager(mcmanager.Options{LeaderElectionID: "controllers.example.com"}, sharding.Options{}); err != nil {
		t.Fatalf("New with sharding and a LeaderElectionID: %v", err)
	}
}

func TestShardingInvalidOptionsAreRejected(t *testing.T) {
	_, err := newShardedManager(mcmanager.Options{}, sharding.Options{Group: "g", Weight: -1})
	if err == nil {
		t.Fatal("New accepted a negative sharding weight")
	}
}

func TestShardingWithoutProviderIsIgnored(t *testing.T) {
	local, err := mcmanager.New(&rest.Config{Host: "https://127.0.0.1:1"}, nil,
		mcmanager.Options{Metrics: metricsserver.Options{BindAddress: "0"}}, mcmanager.WithSharding(sharding.Options{}))
	if err != nil {
		t.Fatalf("New without provider: %v", err)
	}
	if local.GetProvider() != nil {
		t.Fatal("unexpected provider")
	}
}
