// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusters_test

import (
	"context"
	"fmt"

	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/providers/clusters"
)

// Clusters added before the manager starts the provider are parked and engaged by Start.
func Example() {
	p := clusters.New(clusters.Options{})
	cl, err := cluster.New(&rest.Config{Host: "https://east.example:6443"})
	if err != nil {
		panic(err)
	}
	if err := p.Add(context.Background(), "east", cl); err != nil {
		panic(err)
	}
	// Pass p to the manager (mcmanager.New(cfg, p, opts)); it calls p.Start.
	_, err = p.Get(context.Background(), "east")
	fmt.Println(err)
	// Output: cluster "east": cluster not found
}
