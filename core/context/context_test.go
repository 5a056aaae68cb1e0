// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package context_test

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	ctrlreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	mccontext "mcr.dev/core/context"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/reconcile"
)

func TestReconcilerWithClusterInContext(t *testing.T) {
	if _, ok := mccontext.ClusterFrom(context.Background()); ok {
		t.Fatal("an empty context carries no cluster")
	}
	var gotCluster multicluster.ClusterName
	var gotReq ctrlreconcile.Request
	r := mccontext.ReconcilerWithClusterInContext(ctrlreconcile.Func(func(ctx context.Context, req ctrlreconcile.Request) (ctrlreconcile.Result, error) {
		gotCluster, _ = mccontext.ClusterFrom(ctx)
		gotReq = req
		return ctrlreconcile.Result{}, nil
	}))
	want := ctrlreconcile.Request{NamespacedName: types.NamespacedName{Namespace: "n", Name: "o"}}
	if _, err := r.Reconcile(context.Background(), reconcile.Request{Request: want, ClusterName: "b"}); err != nil {
		t.Fatal(err)
	}
	if gotCluster != "b" || gotReq != want {
		t.Fatalf("got cluster %q request %v, want b %v", gotCluster, gotReq, want)
	}
}
