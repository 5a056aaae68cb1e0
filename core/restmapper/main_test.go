// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package restmapper_test

import (
	"testing"

	"mcr.dev/core/envtest"
)

// fleet is shared by the tests of this package: starting apiservers is the slow part.
var fleet *envtest.Fleet

func TestMain(m *testing.M) {
	envtest.Main(m, envtest.Options{Members: []string{"a", "b"}}, func(f *envtest.Fleet) error {
		fleet = f
		return nil
	})
}
