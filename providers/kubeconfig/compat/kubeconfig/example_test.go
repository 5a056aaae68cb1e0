// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kubeconfig_test

import (
	"os"

	ctrl "sigs.k8s.io/controller-runtime"

	mcmanager "mcr.dev/core/manager"
	"mcr.dev/providers/kubeconfig/compat/kubeconfig"
)

// A program written for multicluster-runtime's kubeconfig provider, after the import swap.
func ExampleNew() {
	ctx := ctrl.SetupSignalHandler()
	provider := kubeconfig.New(kubeconfig.Options{Namespace: "mcr-system"})
	mgr, err := mcmanager.New(ctrl.GetConfigOrDie(), provider, mcmanager.Options{})
	if err != nil {
		os.Exit(1)
	}
	if err := provider.SetupWithManager(ctx, mgr); err != nil {
		os.Exit(1)
	}
	if err := mgr.Start(ctx); err != nil && ctx.Err() == nil {
		os.Exit(1)
	}
}
