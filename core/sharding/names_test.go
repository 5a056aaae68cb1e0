// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package sharding_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	"mcr.dev/core/multicluster"
	"mcr.dev/core/sharding"
)

func TestLeaseNamesAreValidAndDistinct(t *testing.T) {
	clusters := []multicluster.ClusterName{
		"", "a", "A", "a-b", "a_b", "a.b", "a/b", "a:b", "kind#dev", "-leading", "trailing-",
		"Ünïcödé", "namespace/with/slashes", multicluster.ClusterName(strings.Repeat("x", 300)),
		multicluster.ClusterName(strings.Repeat("x", 300) + "y"),
	}
	seen := map[string]multicluster.ClusterName{}
	for _, group := range []string{"g", "Group With Spaces/and.dots", strings.Repeat("long-group", 20)} {
		for _, c := range clusters {
			name := sharding.ClusterLeaseName(group, c)
			if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
				t.Errorf("ClusterLeaseName(%q, %q) = %q is not a DNS-1123 label: %v", group, c, name, errs)
			}
			if other, dup := seen[name]; dup {
				t.Errorf("ClusterLeaseName(%q, %q) = %q collides with cluster %q", group, c, name, other)
			}
			seen[name] = c
			if again := sharding.ClusterLeaseName(group, c); again != name {
				t.Errorf("ClusterLeaseName is not stable: %q then %q", name, again)
			}
		}
		member := sharding.MemberLeaseName(group, "pod-7f9c_1a2b3c4d")
		if errs := validation.IsDNS1123Label(member); len(errs) > 0 {
			t.Errorf("MemberLeaseName = %q is not a DNS-1123 label: %v", member, errs)
		}
		if member == sharding.ClusterLeaseName(group, "pod-7f9c_1a2b3c4d") {
			t.Errorf("a member and a cluster of the same name share Lease %q", member)
		}
	}
}
