// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"os"
	"testing"

	"mcr.dev/core/envtest"
	"mcr.dev/examples/internal/exampletest"
	"mcr.dev/examples/internal/teamtest"
)

var fleet *envtest.Fleet

func TestMain(m *testing.M) { os.Exit(exampletest.Main(m, &fleet, "solo")) }

// The "before": a plain controller-runtime controller on one cluster.
func TestSingleCluster(t *testing.T) {
	kubeconfig := exampletest.WriteKubeconfig(t, t.TempDir(), "solo.kubeconfig", fleet.Member("solo"))
	solo := exampletest.Client(t, fleet.Member("solo").Config())
	teamtest.CreateTeamNamespace(t, solo, "blue-apps", "blue")

	p := exampletest.Start(t, func(ctx context.Context) error {
		return run(ctx, []string{"-kubeconfig", kubeconfig, "-metrics-bind-address", "0", "-zap-log-level", "error"})
	})
	p.Eventually(t, "team ConfigMap", teamtest.HasTeamConfigMap(solo, "blue-apps", "blue"))
	p.Stop(t)
}
