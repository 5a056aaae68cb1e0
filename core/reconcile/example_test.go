// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package reconcile_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	ctrlreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"mcr.dev/core/reconcile"
)

// A request names the cluster next to the object; the local cluster has the empty name.
func ExampleRequest() {
	req := reconcile.Request{
		ClusterName: "eu-west",
		Request:     ctrlreconcile.Request{NamespacedName: types.NamespacedName{Namespace: "shop", Name: "cart"}},
	}
	fmt.Println(req)
	fmt.Println(req.WithCluster("").String())
	// Output:
	// cluster://eu-west/shop/cart
	// shop/cart
}
