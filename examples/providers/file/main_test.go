// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"mcr.dev/core/envtest"
	"mcr.dev/examples/internal/exampletest"
)

var fleet *envtest.Fleet

func TestMain(m *testing.M) { os.Exit(exampletest.Main(m, &fleet, "east", "west")) }

// The example engages the clusters of the kubeconfig files in a directory, including a file
// written while it runs, and the controller reaches each of them under its <file>+<context>
// name.
func TestFileProviderExample(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fleet")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	exampletest.WriteKubeconfig(t, dir, "east.kubeconfig", fleet.Member("east"))
	east := exampletest.Client(t, fleet.Member("east").Config())
	west := exampletest.Client(t, fleet.Member("west").Config())
	exampletest.SeedMarked(t, east, "demo", "hello")
	exampletest.SeedMarked(t, west, "demo", "hello")

	host := exampletest.WriteKubeconfig(t, t.TempDir(), "host.kubeconfig", fleet.Member("east"))
	p := exampletest.Start(t, func(ctx context.Context) error {
		return run(ctx, []string{
			"-kubeconfig", host, "-fleet", dir + "/",
			"-metrics-bind-address", "0", "-health-probe-bind-address", "0", "-zap-log-level", "error",
		})
	})
	p.Eventually(t, "east marked", exampletest.MarkedBy(east, "demo", "hello", "east.kubeconfig+east"))

	// A kubeconfig dropped into the directory later joins the fleet.
	exampletest.WriteKubeconfig(t, dir, "west.kubeconfig", fleet.Member("west"))
	p.Eventually(t, "west marked", exampletest.MarkedBy(west, "demo", "hello", "west.kubeconfig+west"))
	p.Stop(t)
}
