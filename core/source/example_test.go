// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package source_test

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	mchandler "mcr.dev/core/handler"
	"mcr.dev/core/multicluster"
	mcsource "mcr.dev/core/source"
)

// A Kind source is a recipe: for every cluster the controller engages, it builds the source that
// watches ConfigMaps there, and says whether that cluster is watched at all. Pass it to a
// controller's MultiClusterWatch (or the builder's WatchesMultiClusterSource), which starts the
// per-cluster source with the cluster's engage context.
func ExampleKind() {
	src := mcsource.Kind(&corev1.ConfigMap{},
		mchandler.TypedEnqueueRequestForObject[*corev1.ConfigMap](),
		predicate.TypedResourceVersionChangedPredicate[*corev1.ConfigMap]{},
	).WithClusterFilter(func(name multicluster.ClusterName, _ cluster.Cluster) bool {
		return strings.HasPrefix(string(name), "prod-")
	})

	for _, name := range []multicluster.ClusterName{"prod-eu", "dev-eu"} {
		// Building a cluster does not reach its apiserver; only starting it does.
		cl, err := cluster.New(&rest.Config{Host: "https://" + string(name) + ".example:6443"})
		if err != nil {
			panic(err)
		}
		perCluster, watched, err := src.ForCluster(name, cl)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s: watched=%t, %s\n", name, watched, perCluster)
	}
	// Output:
	// prod-eu: watched=true, kind source: *v1.ConfigMap
	// dev-eu: watched=false, kind source: *v1.ConfigMap
}
