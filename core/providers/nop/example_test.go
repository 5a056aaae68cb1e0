// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package nop_test

import (
	"context"
	"errors"
	"fmt"

	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/nop"
)

// A nop provider knows no cluster.
func Example() {
	p := nop.New()
	_, err := p.Get(context.Background(), "east")
	fmt.Println(errors.Is(err, multicluster.ErrClusterNotFound))
	// Output: true
}
