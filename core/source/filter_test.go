// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package source_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	mchandler "mcr.dev/core/handler"
	"mcr.dev/core/multicluster"
	mcreconcile "mcr.dev/core/reconcile"
	mcsource "mcr.dev/core/source"
)

// The cluster filter is asked first; a cluster it refuses is not touched (a nil cluster is fine)
// and the handler is not built for it, as in multicluster-runtime. The source is still returned,
// for callers that start it whatever the filter says.
func TestClusterFilterRunsFirst(t *testing.T) {
	built := false
	h := mchandler.TypedEventHandlerFunc[*corev1.ConfigMap, mcreconcile.Request](
		func(multicluster.ClusterName, cluster.Cluster) handler.TypedEventHandler[*corev1.ConfigMap, mcreconcile.Request] {
			built = true
			return nil
		})
	var asked []multicluster.ClusterName
	src := mcsource.Kind(&corev1.ConfigMap{}, h).WithClusterFilter(func(name multicluster.ClusterName, _ cluster.Cluster) bool {
		asked = append(asked, name)
		return false
	})
	s, engage, err := src.ForCluster("filtered", nil)
	if err != nil || engage || s == nil {
		t.Fatalf("ForCluster = %v, %v, %v; want a source, false, nil", s, engage, err)
	}
	if built {
		t.Error("the handler was built for a filtered cluster")
	}
	if len(asked) != 1 || asked[0] != "filtered" {
		t.Errorf("filter asked about %v", asked)
	}
}
