// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package sharding_test

import (
	"testing"

	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"mcr.dev/core/envtest"
)

// fleet is shared by the tests of this package: "host" holds the Leases, "a" and "b" back the
// clusters offered to the replicas.
var fleet *envtest.Fleet

func TestMain(m *testing.M) {
	ctrllog.SetLogger(testLogger())
	envtest.Main(m, envtest.Options{Members: []string{"host", "a", "b"}}, func(f *envtest.Fleet) error {
		fleet = f
		return nil
	})
}
