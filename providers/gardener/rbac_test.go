// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package gardener_test

import (
	"testing"

	"mcr.dev/core/envtest"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/gardener"
)

// Every garden test runs the provider as a ServiceAccount with exactly the permissions of
// config/rbac-garden.yaml (gardenIdentity). TestSeedRBACManifest does the same for the seed.
// Both manifests are quoted in docs/providers/gardener.md only, and `make verify-docs` keeps
// those quotes identical to the files.

// TestSeedRBACManifest runs the seed provider as a ServiceAccount that has exactly the
// permissions of config/rbac-seed.yaml: it must engage a control plane and record its Events.
func TestSeedRBACManifest(t *testing.T) {
	rules := providertest.MustManifestRules(t, "config/rbac-seed.yaml", "ClusterRole")
	cfg := providertest.ServiceAccountConfig(t, fleet.Member("host"), envtest.ServiceAccountOptions{
		Name:         "gardener-seed-provider",
		ClusterRules: rules,
	})
	r := startProvider(t, cfg, gardener.Options{Topology: gardener.TopologySeed, Namespaces: []string{"garden-rbac"}})
	if err := writeSeedSecret(t.Context(), "shoot--rbac--one", memberToken(t, "west", "rbac-one"), nil); err != nil {
		t.Fatal(err)
	}
	name, err := seedCluster(t.Context(), "rbac", embeddedShoot("rbac", "one", nil))
	if err != nil {
		t.Fatal(err)
	}
	r.WaitEngaged(t, gardener.SeedClusterName(name))
	waitEvent(t, "Cluster", "", name, kit.ReasonClusterEngaged)
}
