// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterapi_test

import (
	"context"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
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
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	mgr, err := mcr.NewManager(management, provider, mcr.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	err = mcr.NewControllerManagedBy(mgr).
		Named("configmaps").
		For(&corev1.ConfigMap{}).
		Complete(mcr.Func(func(ctx context.Context, req mcr.Request) (mcr.Result, error) {
			// req.ClusterName is "<namespace>/<name>" of the Cluster object.
			mcr.LoggerFrom(ctx).Info("Reconciling", "cluster", req.ClusterName, "configmap", req.NamespacedName)
			return mcr.Result{}, nil
		}))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := mgr.Start(mcr.SetupSignalHandler()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
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
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	_ = provider // hand it to mcr.NewManager
}

// Management clusters running Cluster API older than v1.11 serve only v1beta1.
func Example_v1beta1() {
	provider, err := clusterapi.New(mcr.GetConfigOrDie(), clusterapi.Options{APIVersion: clusterapi.V1Beta1})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
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
