// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package multicluster_test

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"mcr.dev/core/multicluster"
)

func TestParseNamespacedClusterName(t *testing.T) {
	name := multicluster.NamespacedClusterName("fleet", "east")
	if name != "fleet/east" {
		t.Fatalf("NamespacedClusterName = %q", name)
	}
	if key, err := multicluster.ParseNamespacedClusterName(name); err != nil || key != (types.NamespacedName{Namespace: "fleet", Name: "east"}) {
		t.Errorf("ParseNamespacedClusterName(%q) = %v, %v", name, key, err)
	}
	for _, bad := range []multicluster.ClusterName{"", "east", "/east", "fleet/", "a/b/c", "/"} {
		if key, err := multicluster.ParseNamespacedClusterName(bad); err == nil {
			t.Errorf("ParseNamespacedClusterName(%q) = %v, want an error", bad, key)
		}
	}
}

// A reconciler of a provider that names members after namespaced objects finds the object
// behind a request's cluster, to read it from the host cluster.
func ExampleParseNamespacedClusterName() {
	key, err := multicluster.ParseNamespacedClusterName("fleet/east")
	fmt.Println(key.Namespace, key.Name, err)
	// Output: fleet east <nil>
}
