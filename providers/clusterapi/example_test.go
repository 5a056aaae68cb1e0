// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterapi_test

import (
	"context"
	"fmt"
	"log"

	"k8s.io/apimachinery/pkg/labels"

	"sigs.k8s.io/controller-runtime/pkg/client"

	mcr "mcr.dev/core"
	"mcr.dev/providers/clusterapi"
)

// Run a controller over every workload cluster that Cluster API manages: the manager runs on the
// management cluster and starts the provider, which engages each Cluster once its control plane
// is initialized and follows kubeconfig rotations and deletions.
func Example() {
	management := mcr.GetConfigOrDie() // the Cluster API management cluster
	provider, err := clusterapi.New(management, clusterapi.Options{})
	if err != nil {
		log.Fatal(err)
	}
	mgr, err := mcr.NewManager(management, provider, mcr.Options{})
	if err != nil {
		log.Fatal(err)
	}
	// Build controllers on mgr as in mcr's Example (mcr.dev/core). A request's ClusterName is
	// "<namespace>/<name>" of its Cluster object; ClusterKey turns it back into the Cluster's key,
	// to read the Cluster from the management cluster (mgr.GetLocalManager().GetClient()).
	if err := mgr.Start(mcr.SetupSignalHandler()); err != nil {
		log.Fatal(err)
	}
}

// Serve part of the fleet: Docker-backed Clusters labeled env=prod in the "fleet" namespace,
// engaged only while Cluster API reports their control plane available.
func Example_options() {
	provider, err := clusterapi.New(mcr.GetConfigOrDie(), clusterapi.Options{
		Namespaces:          []string{"fleet"},
		Selector:            labels.SelectorFromSet(labels.Set{"env": "prod"}),
		InfrastructureKinds: []string{"DockerCluster"},
		Filter: func(_ context.Context, cluster client.Object) bool {
			return cluster.GetAnnotations()["example.com/skip"] != "true"
		},
		IsReady: clusterapi.ControlPlaneAvailable,
	})
	if err != nil {
		log.Fatal(err)
	}
	_ = provider // hand it to mcr.NewManager
}

// Management clusters running Cluster API older than v1.11 serve only v1beta1.
func Example_v1beta1() {
	provider, err := clusterapi.New(mcr.GetConfigOrDie(), clusterapi.Options{APIVersion: clusterapi.V1Beta1})
	if err != nil {
		log.Fatal(err)
	}
	_ = provider // hand it to mcr.NewManager
}

// Cluster names are the namespace and name of the Cluster object, and map back to it.
func ExampleClusterName() {
	name := clusterapi.ClusterName("fleet", "east")
	fmt.Println(name)
	key, err := clusterapi.ClusterKey(name)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(key.Namespace, key.Name, clusterapi.KubeconfigSecretName(key.Name))
	// Output:
	// fleet/east
	// fleet east east-kubeconfig
}
