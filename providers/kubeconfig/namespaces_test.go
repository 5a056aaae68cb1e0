// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kubeconfig_test

import (
	"errors"
	"slices"
	"testing"

	"mcr.dev/core/multicluster"
)

// TestNamespacesWatchesEachListedNamespace: with Options.Namespaces, Secrets of every listed
// namespace are engaged and those of any other namespace are not.
func TestNamespacesWatchesEachListedNamespace(t *testing.T) {
	nsA, nsB, outside := newNamespace(t), newNamespace(t), newNamespace(t)
	putSecret(t, nsA, "in-a", fleet.Member("m1").Kubeconfig())
	putSecret(t, nsB, "in-b", fleet.Member("m2").Kubeconfig())
	putSecret(t, outside, "outside", fleet.Member("m1").Kubeconfig())

	opts := testOptions("")
	opts.Namespaces = []string{nsA, nsB}
	p := newProvider(t, opts)
	startProvider(t, p, newRecordingAware())

	// Listed: every Secret the provider can see has been tried once.
	eventually(t, waitTimeout, "first list synced", func() error {
		if !p.FleetStatus().Listed {
			return errors.New("not listed yet")
		}
		return nil
	})
	if got, want := p.ClusterNames(), []multicluster.ClusterName{"in-a", "in-b"}; !slices.Equal(got, want) {
		t.Errorf("ClusterNames = %v, want %v: the Secrets of both listed namespaces only", got, want)
	}
}
