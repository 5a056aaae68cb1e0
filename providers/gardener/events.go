// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package gardener

// EventSource is the reporting controller of the Events the provider records on Shoots and
// seed Cluster objects.
const EventSource = "mcr.dev/" + providerName

// Reasons of the Events the provider records on Shoots (garden) and Cluster objects (seed).
// Warnings are recorded when a problem appears or changes, not again while it stays the same;
// each attempt still counts in the Errors metric.
// The reasons every provider shares (InvalidKubeconfig, ClusterSetupFailed, Unauthorized,
// ClusterUnreachable, EngageFailed, ClusterEngaged, CredentialsRotated, ClusterDisengaged) are the
// provider kit's: kit.Reason* in mcr.dev/core/providers/kit.
const (
	// ReasonAdminKubeconfigFailed (Warning, garden): the adminkubeconfig subresource refused to
	// issue credentials (Forbidden: RBAC; Invalid: e.g. no advertised address yet) or did not
	// answer. Retried with backoff.
	ReasonAdminKubeconfigFailed = "AdminKubeconfigFailed"

	// ReasonCredentialsExpired (Warning, garden): the engaged cluster's admin credentials
	// expired before new ones could be engaged, so it was disengaged. Retried with backoff.
	ReasonCredentialsExpired = "CredentialsExpired"

	// ReasonInvalidCluster (Warning, seed): the Cluster object's spec.shoot is not a Shoot.
	// Retried when the Cluster object changes.
	ReasonInvalidCluster = "InvalidCluster"

	// ReasonKubeconfigSecretMissing (Warning, seed): the Shoot is usable but its control-plane
	// namespace has no Secret "gardener". Retried when the Secret appears.
	ReasonKubeconfigSecretMissing = "KubeconfigSecretMissing"

	// reasonMissingData is the metric reason of a "gardener" Secret without a kubeconfig.
	reasonMissingData = "MissingKubeconfigData"
)
