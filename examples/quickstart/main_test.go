// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"mcr.dev/core/envtest"
	"mcr.dev/examples/internal/exampletest"
	"mcr.dev/examples/internal/kindstandin"
)

// kindState is the state directory of the docker stand-in: the "kind installation" of the kind
// test.
var kindState string

func TestMain(m *testing.M) {
	exampletest.RunChild(runCommand)
	dir, err := os.MkdirTemp("", "mcr-quickstart-kind-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	kindState = dir
	// There is no container engine here: the kind library finds the kind provider's docker
	// stand-in on PATH instead.
	if err := kindstandin.Install(dir, dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// The demo is the project's front door: `make demo` must keep working, so CI runs it too (with
// two clusters to keep it short). run fails unless every cluster's ConfigMap was reconciled,
// checked directly in each cluster.
func TestQuickstartOnEmbeddedFleet(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := run(ctx, options{clusters: 2}); err != nil {
		t.Fatal(err)
	}
}

// -kind runs on the local kind clusters with the prefix, under their kind names. The command
// runs in a process of its own: the other test runs the same controller in this one.
func TestQuickstartOnKindClusters(t *testing.T) {
	fleet := envtest.StartForTest(t, "a", "b")
	for _, m := range fleet.Members() {
		if err := kindstandin.Create(kindState, "fleet-"+m.Name(), m.Kubeconfig()); err != nil {
			t.Fatal(err)
		}
	}
	p := exampletest.StartChild(t, "-kind", "-kind-prefix", "fleet-", "-timeout", "2m")
	if err := p.Wait(t, 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	// run checked the annotations in every cluster itself; the output names the clusters.
	out := p.Output()
	for _, name := range []string{"fleet-a", "fleet-b"} {
		if !strings.Contains(out, "reconciled ConfigMap demo/greeting in cluster "+name) {
			t.Errorf("the output does not report cluster %s:\n%s", name, out)
		}
	}
}
