// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package sharding_test

import (
	"fmt"
	"math"
	"os"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/nop"
	"mcr.dev/core/sharding"
)

// Run the same binary as several replicas (a Deployment with replicas: 3, no leader election);
// each engages its controllers with its share of the fleet. POD_NAMESPACE (from the downward
// API) places the Leases next to the pods.
func Example() {
	ctx := ctrl.SetupSignalHandler()
	cfg, err := ctrl.GetConfig()
	if err != nil {
		os.Exit(1)
	}
	provider := nop.New() // any provider: it runs on every replica and discovers the whole fleet
	mgr, err := mcmanager.New(cfg, provider, mcmanager.Options{},
		mcmanager.WithSharding(sharding.Options{
			Group: "configmap-sync.example.com",
			// A longer LeaseDuration means fewer Lease writes and a slower failover after a
			// crash; a graceful stop hands clusters over at once either way.
			LeaseDuration: 30 * time.Second,
		}))
	if err != nil {
		os.Exit(1)
	}
	// ... add controllers with mcbuilder.ControllerManagedBy(mgr) ...
	if err := mgr.Start(ctx); err != nil && ctx.Err() == nil {
		os.Exit(1)
	}
}

// Every replica computes the same owner for a cluster from the live peers, without talking to
// the others; a replica with twice the weight owns about twice as many clusters.
func ExampleOwner() {
	peers := []sharding.Peer{{ID: "pod-a", Weight: 1}, {ID: "pod-b", Weight: 1}, {ID: "pod-c", Weight: 2}}
	owned := map[string]int{}
	for i := range 4000 {
		owner, _ := sharding.Owner(multicluster.ClusterName(fmt.Sprintf("cluster-%d", i)), peers)
		owned[owner.ID]++
	}
	for _, p := range peers {
		share := float64(owned[p.ID]) / 4000
		fmt.Printf("%s: about %.0f%%\n", p.ID, math.Round(share*20)*5) // to the nearest 5%
	}
	// Output:
	// pod-a: about 25%
	// pod-b: about 25%
	// pod-c: about 50%
}
