// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package conformance_test

import (
	"k8s.io/client-go/rest"

	upstreammanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	"mcr.dev/conformance"
	"mcr.dev/core/multicluster"
)

// newUpstreamManager runs the provider under sigs.k8s.io/multicluster-runtime's manager, as
// an upstream user's program does.
func newUpstreamManager(config *rest.Config, provider multicluster.Provider, r conformance.Runnable) (conformance.Manager, error) {
	mgr, err := upstreammanager.New(config, provider, conformance.ManagerOptions())
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(r); err != nil {
		return nil, err
	}
	return mgr, nil
}
