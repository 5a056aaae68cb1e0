// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterprofile_test

import (
	"testing"

	"mcr.dev/core/envtest"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/clusterprofile"
)

// TestRBACManifest runs the provider, with both strategies, as a ServiceAccount that has exactly
// the permissions of config/rbac.yaml on the hub: it must engage profiles and record Events.
// The manifest is quoted in docs/providers/clusterprofile.md only, and `make verify-docs` keeps
// that quote identical to the file.
func TestRBACManifest(t *testing.T) {
	ns := namespace(t)
	cfg := providertest.ServiceAccountConfig(t, fleet.Member("hub"), envtest.ServiceAccountOptions{
		Name:         "clusterprofile-provider",
		ClusterRules: providertest.MustManifestRules(t, "config/rbac.yaml", "ClusterRole"),
	})
	logs := &logBuffer{}
	p, err := clusterprofile.New(cfg, clusterprofile.Options{
		Namespaces:      []string{ns},
		AccessProviders: accessConfig(t, ""),
		Secret:          &clusterprofile.SecretStrategy{ConsumerName: consumer},
		Options:         kit.Options{Logger: logs.Logger()},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := runProvider(t, p, logs)
	if err := writeTokenSecret(t.Context(), ns+"-p", mustMemberToken(t, "east", ns+"-p"), ""); err != nil {
		t.Fatal(err)
	}
	mustCreateProfile(t, ns, "byplugin", readyStatus("east", ns+"-p", ""))
	if err := writeKubeconfigSecret(t.Context(), ns, "bysecret", saKubeconfig(t, "west", ns+"-s")); err != nil {
		t.Fatal(err)
	}
	mustCreateProfile(t, ns, "bysecret", healthyStatus())
	s.WaitEngaged(t, clusterprofile.ClusterName(ns, "byplugin"))
	s.WaitEngaged(t, clusterprofile.ClusterName(ns, "bysecret"))
	waitEvent(t, ns, "byplugin", kit.ReasonClusterEngaged)
	waitEvent(t, ns, "bysecret", kit.ReasonClusterEngaged)
}
