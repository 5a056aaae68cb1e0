package clusterapi

import (
	"mcr.dev/core/providers/kit"
)

// EventSource is the reporting controller of the Events the provider records on Clusters.
const EventSource = "mcr.dev/" + providerName

// Reasons of the Events the provider records on Cluster objects. Warnings are recorded when a
// problem appears or changes, not again while it stays the same; each attempt still counts in
// the Errors metric.
const (
	// ReasonKubeconfigSecretMissing (Warning): the Cluster is ready but its kubeconfig Secret
	// does not exist, or lacks the cluster.x-k8s.io/cluster-name label. Retried when the Secret
	// appears.
	ReasonKubeconfigSecretMissing = "KubeconfigSecretMissing"

	// ReasonInvalidKubeconfig (Warning): the kubeconfig Secret has no data under "value", or its
	// kubeconfig cannot be decoded or uses a feature Options.Policy refuses (the note names the
	// field and the Policy field that allows it). Retried when the Secret changes.
	ReasonInvalidKubeconfig = kit.ReasonInvalidKubeconfig

	// ReasonUnauthorized (Warning): the workload cluster refused the kubeconfig's credentials.
	// Retried with backoff, and when the Secret changes.
	ReasonUnauthorized = kit.ReasonUnauthorized

	// ReasonClusterUnreachable (Warning): the workload cluster did not answer, or its cache did
	// not sync within Options.CacheSyncTimeout. Retried with backoff.
	ReasonClusterUnreachable = kit.ReasonClusterUnreachable

	// ReasonEngageFailed (Warning): the manager refused the cluster (an Aware returned an
	// error). Retried with backoff.
	ReasonEngageFailed = kit.ReasonEngageFailed

	// ReasonClusterEngaged (Normal): the cluster is engaged.
	ReasonClusterEngaged = kit.ReasonClusterEngaged

	// ReasonCredentialsRotated (Normal): the kubeconfig changed and the cluster was engaged
	// again with it.
	ReasonCredentialsRotated = kit.ReasonCredentialsRotated

	// ReasonClusterDisengaged (Normal): the cluster was disengaged because the Cluster stopped
	// being ready or selected. Deleted Clusters get no Event.
	ReasonClusterDisengaged = kit.ReasonClusterDisengaged

	// reasonMissingData is the metric reason of a kubeconfig Secret without data under "value".
	reasonMissingData = "MissingKubeconfigData"
)
