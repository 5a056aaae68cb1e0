// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package configmapprovider_test

import (
	"context"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"

	mcr "mcr.dev/core"
	"mcr.dev/examples/custom-provider/configmapprovider"
)

// Run a controller over the clusters listed in the ConfigMap mcr-system/clusters of the cluster
// the process runs in. The manager starts the provider.
func Example() {
	host := mcr.GetConfigOrDie()
	provider, err := configmapprovider.New(host, configmapprovider.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	mgr, err := mcr.NewManager(host, provider, mcr.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	err = mcr.NewControllerManagedBy(mgr).
		For(&corev1.ConfigMap{}).
		Complete(mcr.Func(func(ctx context.Context, req mcr.Request) (mcr.Result, error) {
			// req.ClusterName is a key of the ConfigMap.
			mcr.LoggerFrom(ctx).Info("Reconciling")
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
