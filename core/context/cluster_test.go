// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package context_test

import (
	"context"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	mccontext "mcr.dev/core/context"
)

func TestClusterObjectInContext(t *testing.T) {
	if _, ok := mccontext.ClusterObjectFrom(context.Background()); ok {
		t.Fatal("an empty context carries a cluster object")
	}
	cl, err := cluster.New(&rest.Config{Host: "https://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := mccontext.WithClusterObject(mccontext.WithCluster(context.Background(), "east"), cl)
	got, ok := mccontext.ClusterObjectFrom(ctx)
	if !ok || got != cl {
		t.Errorf("ClusterObjectFrom = %v, %v; want the cluster stored", got, ok)
	}
	if name, _ := mccontext.ClusterFrom(ctx); name != "east" {
		t.Errorf("the name is %q after storing the cluster object", name)
	}
	if _, ok := mccontext.ClusterObjectFrom(mccontext.WithClusterObject(context.Background(), nil)); ok {
		t.Error("a nil cluster object counts as one")
	}
}
