// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterapi

import (
	"strings"

	"k8s.io/apimachinery/pkg/types"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"mcr.dev/core/multicluster"
)

// The kubeconfig Secret of a Cluster, as the Cluster API control plane contract defines it
// (and sigs.k8s.io/cluster-api/util/secret names it): in the Cluster's namespace, named
// "<cluster>-kubeconfig", labeled cluster.x-k8s.io/cluster-name=<cluster>, with the kubeconfig
// under the data key "value".
const (
	// KubeconfigSecretSuffix is appended to a Cluster's name to name its kubeconfig Secret.
	KubeconfigSecretSuffix = "-kubeconfig"

	// KubeconfigDataKey is the key of the kubeconfig in the Secret's data.
	KubeconfigDataKey = "value"

	// ClusterNameLabel is the label Cluster API puts on every Secret of a Cluster. The provider
	// watches only Secrets that carry it, as Cluster API's own controllers do.
	ClusterNameLabel = clusterv1.ClusterNameLabel
)

// KubeconfigSecretName returns the name of the kubeconfig Secret of the Cluster named cluster.
func KubeconfigSecretName(cluster string) string {
	return cluster + KubeconfigSecretSuffix
}

// ClusterName returns the name under which the provider engages the Cluster namespace/name:
// "<namespace>/<name>". Cluster objects are namespaced and names are unique only within a
// namespace, so the namespace is always part of the name.
func ClusterName(namespace, name string) multicluster.ClusterName {
	return multicluster.NamespacedClusterName(namespace, name)
}

// ClusterKey returns the namespace and name of the Cluster object behind a cluster name that
// ClusterName made.
func ClusterKey(name multicluster.ClusterName) (types.NamespacedName, error) {
	return multicluster.ParseNamespacedClusterName(name)
}

// clusterOfSecret returns the Cluster whose kubeconfig Secret is namespace/name, or false when
// name is not a kubeconfig Secret name.
func clusterOfSecret(namespace, name string) (types.NamespacedName, bool) {
	cluster, ok := strings.CutSuffix(name, KubeconfigSecretSuffix)
	if !ok || cluster == "" {
		return types.NamespacedName{}, false
	}
	return types.NamespacedName{Namespace: namespace, Name: cluster}, true
}
