// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterapi

// EventSource is the reporting controller of the Events the provider records on Clusters.
const EventSource = "mcr.dev/" + providerName

// Reasons of the Events the provider records on Cluster objects. Warnings are recorded when a
// problem appears or changes, not again while it stays the same; each attempt still counts in
// the Errors metric.
// The reasons every provider shares (InvalidKubeconfig, ClusterSetupFailed, Unauthorized,
// ClusterUnreachable, EngageFailed, ClusterEngaged, CredentialsRotated, ClusterDisengaged) are the
// provider kit's: kit.Reason* in mcr.dev/core/providers/kit.
const (
	// ReasonKubeconfigSecretMissing (Warning): the Cluster is ready but its kubeconfig Secret
	// does not exist, or lacks the cluster.x-k8s.io/cluster-name label. Retried when the Secret
	// appears.
	ReasonKubeconfigSecretMissing = "KubeconfigSecretMissing"

	// reasonMissingData is the metric reason of a kubeconfig Secret without data under "value".
	reasonMissingData = "MissingKubeconfigData"
)
