// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kit_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/clusters"
	"mcr.dev/core/envtest"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/restmapper"
)

// TestMembersShareRESTMappersByDefault: members of one endpoint that the kit builds share
// restmapper.Default's mapper without any option, with their credentials refreshed in place
// or not; a provider's restmapper.Own option and the manager's OwnRESTMappers default keep a
// mapper per member.
func TestMembersShareRESTMappersByDefault(t *testing.T) {
	fleet := envtest.StartForTest(t, "host", "member")
	host, member := fleet.Member("host").Config(), fleet.Member("member").Config()
	sharing := func() int { return restmapper.Default().Clusters(member) }
	deployments := schema.GroupKind{Group: "apps", Kind: "Deployment"}
	maps := func(name string, cl cluster.Cluster) {
		t.Helper()
		if m, err := cl.GetRESTMapper().RESTMapping(deployments, "v1"); err != nil || m.Resource.Resource != "deployments" {
			t.Errorf("%s: mapping Deployment: %v, %v", name, m, err)
		}
	}

	shared := newMemberProvider(t, kit.Options{})
	runManager(t, host, shared, mcmanager.Options{})
	shared.set("one", member)
	shared.set("two", member)
	one, two := engaged(t, shared, "one"), engaged(t, shared, "two")
	if got := sharing(); got != 2 {
		t.Errorf("members sharing the default mapper of the endpoint: %d, want 2", got)
	}
	maps("one", one)
	maps("two", two)

	own := newMemberProvider(t, kit.Options{ClusterOptions: []cluster.Option{restmapper.Own}})
	runManager(t, host, own, mcmanager.Options{})
	own.set("three", member)
	maps("three", engaged(t, own, "three"))

	ownByDefault := newMemberProvider(t, kit.Options{})
	runManager(t, host, ownByDefault, mcmanager.Options{}, mcmanager.WithClusterDefaults(clusters.Defaults{OwnRESTMappers: true}))
	ownByDefault.set("four", member)
	maps("four", engaged(t, ownByDefault, "four"))

	if got := sharing(); got != 2 {
		t.Errorf("members sharing the default mapper after two providers opted out: %d, want still 2", got)
	}

	// Members whose credentials are refreshed in place reach the member through a Transport of
	// the kit's own; they share all the same.
	refreshing := newMemberProvider(t, kit.Options{RefreshCredentialsInPlace: ptr.To(true)})
	runManager(t, host, refreshing, mcmanager.Options{})
	refreshing.set("five", member)
	maps("five", engaged(t, refreshing, "five"))
	if got := sharing(); got != 3 {
		t.Errorf("members sharing the default mapper after one refreshed in place engaged: %d, want 3", got)
	}
}
