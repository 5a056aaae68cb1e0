// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package context_test

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	ctrlreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	mccontext "mcr.dev/core/context"
	mcreconcile "mcr.dev/core/reconcile"
)

// A single-cluster reconciler runs in a multi-cluster controller unchanged: the adapter puts the
// request's cluster into the context, where the reconciler (or the manager's
// ClusterFromContext) finds it.
func ExampleReconcilerWithClusterInContext() {
	singleCluster := ctrlreconcile.Func(func(ctx context.Context, req ctrlreconcile.Request) (ctrlreconcile.Result, error) {
		name, ok := mccontext.ClusterFrom(ctx)
		fmt.Printf("reconciling %s in cluster %q (found: %t)\n", req.NamespacedName, name, ok)
		return ctrlreconcile.Result{}, nil
	})
	reconciler := mccontext.ReconcilerWithClusterInContext(singleCluster)

	req := mcreconcile.Request{ClusterName: "eu-west"}
	req.NamespacedName = types.NamespacedName{Namespace: "shop", Name: "cart"}
	if _, err := reconciler.Reconcile(context.Background(), req); err != nil {
		fmt.Println(err)
	}
	// Output: reconciling shop/cart in cluster "eu-west" (found: true)
}

// Code that serves one member outside a reconciler, such as an admission webhook, hands the
// cluster on in its context; a context without one says so.
func ExampleWithCluster() {
	ctx := mccontext.WithCluster(context.Background(), "us-east")
	name, ok := mccontext.ClusterFrom(ctx)
	fmt.Println(name, ok)

	_, ok = mccontext.ClusterFrom(context.Background())
	fmt.Println(ok)
	_, ok = mccontext.ClusterObjectFrom(ctx) // only WithClusterObject sets the cluster object
	fmt.Println(ok)
	// Output:
	// us-east true
	// false
	// false
}
