// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kcp

import "sigs.k8s.io/controller-runtime/pkg/cluster"

// HandlerCount returns how many event handlers a logical cluster engaged by the provider has
// registered on its endpoint's shared informers, or -1 for another kind of cluster.
func HandlerCount(cl cluster.Cluster) int {
	lc, ok := cl.(*logicalCluster)
	if !ok {
		return -1
	}
	return lc.View().HandlerCount()
}
