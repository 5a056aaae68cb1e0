// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package multi_test

import (
	"context"
	"errors"
	"fmt"

	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/multi"
	"mcr.dev/core/providers/nop"
)

// Compose providers under prefixes; "kind#dev" is the cluster "dev" of the member "kind".
func Example() {
	p := multi.New(multi.Options{})
	if err := p.AddProvider("kind", nop.New()); err != nil {
		panic(err)
	}
	fmt.Println(p.ProviderNames())
	_, err := p.Get(context.Background(), "kind#dev")
	fmt.Println(errors.Is(err, multicluster.ErrClusterNotFound))
	// Output:
	// [kind]
	// true
}
