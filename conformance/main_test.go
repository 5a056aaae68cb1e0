// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package conformance_test

import (
	"testing"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"mcr.dev/conformance"
	"mcr.dev/core/envtest"
)

// fleet is shared by every test of this binary: one etcd, a manager host, a host for namespace
// providers and three apiservers for members.
var fleet *envtest.Fleet

// newFleet returns a conformance Fleet over the member apiservers. Each harness gets its own,
// so that the members of one run get distinct apiservers even while other runs are going on.
func newFleet() *conformance.Fleet {
	return conformance.NewFleet(fleet.Member("s0"), fleet.Member("s1"), fleet.Member("s2"))
}

func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard())
	envtest.Main(m, envtest.Options{Members: append([]string{"host", "s0", "s1", "s2"}, upstreamNamespaceMembers...)}, func(f *envtest.Fleet) error {
		fleet = f
		return nil
	})
}
