// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package single_test

import (
	"context"
	"fmt"

	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/providers/single"
)

// Serve one remote cluster under the name "east". The manager calls Start; until then Get does
// not know the cluster.
func Example() {
	cl, err := cluster.New(&rest.Config{Host: "https://east.example:6443"})
	if err != nil {
		panic(err)
	}
	p := single.New("east", cl, single.Options{})
	_, err = p.Get(context.Background(), "east")
	fmt.Println(err)
	// Output: cluster "east": cluster not found
}
