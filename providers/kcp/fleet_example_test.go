// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kcp_test

import (
	"context"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"

	mcr "mcr.dev/core"
	corefleet "mcr.dev/core/fleet"
	"mcr.dev/core/multicluster"
	"mcr.dev/providers/kcp"
)

// Read across every engaged logical cluster at once: list the ConfigMaps of all of them,
// grouped by logical cluster, from the endpoints' shared caches, and hear of their changes
// through one handler.
func ExampleProvider_Fleet() {
	provider, err := kcp.New(mcr.GetConfigOrDie(), "widgets", kcp.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Once the manager runs the provider:
	ctx := context.Background()
	reader := provider.Fleet()
	byCluster, err := corefleet.ListByCluster[*corev1.ConfigMap](ctx, reader, &corev1.ConfigMapList{},
		client.InNamespace("default"), client.MatchingLabels{"app": "web"})
	if err != nil {
		// A *corefleet.PartialError names the logical clusters of an endpoint that could not be
		// read; the others' ConfigMaps are in byCluster.
		fmt.Fprintln(os.Stderr, err)
	}
	for cluster, configMaps := range byCluster {
		fmt.Println(cluster, len(configMaps))
	}

	reg, err := reader.AddEventHandler(ctx, &corev1.ConfigMap{}, corefleet.HandlerFuncs{
		AddFunc: func(cluster multicluster.ClusterName, obj client.Object, _ bool) {
			fmt.Println("ConfigMap", obj.GetNamespace(), obj.GetName(), "in", cluster)
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	defer reg.Remove()
}
