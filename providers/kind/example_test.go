// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kind_test

import (
	"context"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"

	mcr "mcr.dev/core"
	"mcr.dev/providers/kind"
)

// Run a controller over every local kind cluster whose name starts with "fleet-". Create them
// with `kind create cluster --name fleet-a` and `kind create cluster --name fleet-b`; the
// manager starts the provider, which engages clusters as they are created and disengages them
// as they are deleted.
func Example() {
	provider := kind.New(kind.Options{Prefix: "fleet-"})
	mgr, err := mcr.NewManager(mcr.GetConfigOrDie(), provider, mcr.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	err = mcr.NewControllerManagedBy(mgr).
		Named("configmaps").
		For(&corev1.ConfigMap{}).
		Complete(mcr.Func(func(ctx context.Context, req mcr.Request) (mcr.Result, error) {
			// req.ClusterName is the kind cluster's name, e.g. "fleet-a".
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

// A controller that runs in a container on the "kind" network (for example in a pod of
// another kind cluster) reaches the clusters through their internal addresses. Choose the
// container engine explicitly with KindOptions, e.g. kindcluster.ProviderWithPodman().
func ExampleOptions_internal() {
	provider := kind.New(kind.Options{Prefix: "fleet-", Internal: true})
	fmt.Println(provider.ClusterNames())
	// Output: []
}
