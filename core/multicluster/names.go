// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package multicluster

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// NamespacedClusterName returns "<namespace>/<name>": how providers whose members are namespaced
// objects of a host cluster (Cluster API Clusters, ClusterProfiles, Gardener Shoots) name the
// member of the object namespace/name. Object names are unique only within a namespace, so the
// namespace is part of the name; it is never empty, so the name never starts with a slash
// (unlike types.NamespacedName.String of a cluster-scoped object).
func NamespacedClusterName(namespace, name string) ClusterName {
	return ClusterName(namespace + "/" + name)
}

// ParseNamespacedClusterName returns the namespace and name of the object behind a cluster name
// that NamespacedClusterName made, and an error for any other name.
func ParseNamespacedClusterName(name ClusterName) (types.NamespacedName, error) {
	ns, n, ok := strings.Cut(string(name), "/")
	if !ok || ns == "" || n == "" || strings.Contains(n, "/") {
		return types.NamespacedName{}, fmt.Errorf("cluster name %q is not of the form <namespace>/<name>", name)
	}
	return types.NamespacedName{Namespace: ns, Name: n}, nil
}
