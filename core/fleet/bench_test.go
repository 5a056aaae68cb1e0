// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package fleet_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/fleet"
	"mcr.dev/core/internal/testcheck"
)

// BenchmarkList lists the ConfigMaps of one namespace across three members, 100 in each, from
// the caches, from the caches with CheckReachable, and through the API readers: the figures of
// docs/advanced/fleet-reads.md.
func BenchmarkList(b *testing.B) {
	const perMember = 100
	ns := namespace(b, "a", "b", "c")
	for _, m := range []string{"a", "b", "c"} {
		for i := range perMember {
			create(b, m, configMap(ns, fmt.Sprintf("cm-%03d", i), map[string]string{"app": "web"}, map[string]string{"key": "value"}))
		}
	}
	mgr := newManager(b, newProvider(b, "a", "b", "c"))
	readers := []struct {
		name string
		r    *fleet.Reader
	}{
		{"caches", newReader(b, mgr, fleet.Options{})},
		{"caches+CheckReachable", newReader(b, mgr, fleet.Options{CheckReachable: true})},
		{"APIReader", newReader(b, mgr, fleet.Options{UseAPIReader: true})},
	}
	runManager(b, mgr, "a", "b", "c")
	for _, rc := range readers {
		b.Run(rc.name, func(b *testing.B) {
			list := func() int {
				l := &corev1.ConfigMapList{}
				if err := rc.r.List(b.Context(), l, client.InNamespace(ns)); err != nil {
					b.Fatal(err)
				}
				return len(l.Items)
			}
			// The first read of a cache starts its informer, whose first list may miss the
			// latest writes.
			testcheck.WaitFor(b, "every ConfigMap", func() bool { return list() == 3*perMember })
			b.ReportAllocs()
			for b.Loop() {
				if n := list(); n != 3*perMember {
					b.Fatalf("listed %d ConfigMaps, want %d", n, 3*perMember)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*3*perMember), "ns/object")
		})
	}
}
