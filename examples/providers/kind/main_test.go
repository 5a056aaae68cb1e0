// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"os"
	"testing"

	"mcr.dev/core/envtest"
	"mcr.dev/examples/internal/exampletest"
	"mcr.dev/examples/internal/kindstandin"
)

var (
	fleet *envtest.Fleet
	// kindState is the state directory of the docker stand-in: the "kind installation".
	kindState string
)

// TestMain puts the kind provider's docker stand-in on PATH, so that the real kind library
// lists stand-in kind clusters served by the fleet's apiservers: there is no container engine
// here.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcr-example-kind-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	kindState = dir
	if err := kindstandin.Install(dir, dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := exampletest.Main(m, &fleet, "east", "west")
	os.RemoveAll(dir)
	os.Exit(code)
}

// The example engages the kind clusters with the prefix, also one created while it runs, under
// their kind names.
func TestKindProviderExample(t *testing.T) {
	east := exampletest.Client(t, fleet.Member("east").Config())
	west := exampletest.Client(t, fleet.Member("west").Config())
	exampletest.SeedMarked(t, east, "demo", "hello")
	exampletest.SeedMarked(t, west, "demo", "hello")
	if err := kindstandin.Create(kindState, "fleet-a", fleet.Member("east").Kubeconfig()); err != nil {
		t.Fatal(err)
	}

	host := exampletest.WriteKubeconfig(t, t.TempDir(), "host.kubeconfig", fleet.Member("east"))
	p := exampletest.Start(t, func(ctx context.Context) error {
		return run(ctx, []string{
			"-kubeconfig", host, "-prefix", "fleet-", "-poll-interval", "300ms",
			"-metrics-bind-address", "0", "-health-probe-bind-address", "0", "-zap-log-level", "error",
		})
	})
	p.Eventually(t, "fleet-a marked", exampletest.MarkedBy(east, "demo", "hello", "fleet-a"))

	// `kind create cluster --name fleet-b` while the controller runs.
	if err := kindstandin.Create(kindState, "fleet-b", fleet.Member("west").Kubeconfig()); err != nil {
		t.Fatal(err)
	}
	p.Eventually(t, "fleet-b marked", exampletest.MarkedBy(west, "demo", "hello", "fleet-b"))
	p.Stop(t)
}

// Unknown engines are refused before anything starts.
func TestKindProviderExampleRefusesUnknownEngine(t *testing.T) {
	err := run(t.Context(), []string{"-engine", "lxc", "-kubeconfig", exampletest.WriteKubeconfig(t, t.TempDir(), "host.kubeconfig", fleet.Member("east"))})
	if err == nil {
		t.Fatal("run accepted -engine lxc")
	}
}
