// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package namespace_test

import (
	"fmt"

	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/namespace"
)

// Every namespace of the host becomes a cluster. The host is started by its owner, usually as
// the manager's local cluster; the manager starts the provider.
func Example() {
	host, err := cluster.New(&rest.Config{Host: "https://host.example:6443"})
	if err != nil {
		panic(err)
	}
	var p multicluster.ProviderRunnable = namespace.New(host, namespace.Options{})
	_ = p // mcmanager.New(cfg, p, opts) would start it

	// Inside the cluster "team-a", the host namespace "team-a" appears as:
	fmt.Println(namespace.InnerNamespace)
	// Output: default
}
