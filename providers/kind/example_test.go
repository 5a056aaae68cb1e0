// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kind_test

import (
	"fmt"
	"log"

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
		log.Fatal(err)
	}
	// Build controllers on mgr as in mcr's Example (mcr.dev/core). A request's ClusterName is
	// the kind cluster's name, e.g. "fleet-a".
	if err := mgr.Start(mcr.SetupSignalHandler()); err != nil {
		log.Fatal(err)
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
