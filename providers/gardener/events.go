package gardener

import (
	"mcr.dev/core/providers/kit"
)

// EventSource is the reporting controller of the Events the provider records on Shoots and
// seed Cluster objects.
const EventSource = "mcr.dev/" + providerName

// Reasons of the Events the provider records on Shoots (garden) and Cluster objects (seed).
// Warnings are recorded when a problem appears or changes, not again while it stays the same;
// each attempt still counts in the Errors metric.
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

	// ReasonInvalidKubeconfig (Warning): the kubeconfig is missing, cannot be decoded or uses a
	// feature Options.Policy refuses (the note names the field and the Policy field that allows
	// it). Retried when its source changes (seed) or with the next credentials (garden).
	ReasonInvalidKubeconfig = kit.ReasonInvalidKubeconfig

	// ReasonClusterSetupFailed (Warning): an Options.RESTOptions function failed or
	// controller-runtime refused the shoot's rest.Config. Retried like ReasonInvalidKubeconfig.
	ReasonClusterSetupFailed = kit.ReasonClusterSetupFailed

	// ReasonUnauthorized (Warning): the shoot refused the credentials. Retried with backoff.
	ReasonUnauthorized = kit.ReasonUnauthorized

	// ReasonClusterUnreachable (Warning): the shoot's API server did not answer, or its cache did
	// not sync within Options.CacheSyncTimeout. Retried with backoff.
	ReasonClusterUnreachable = kit.ReasonClusterUnreachable

	// ReasonEngageFailed (Warning): the manager refused the cluster (an Aware returned an
	// error). Retried with backoff.
	ReasonEngageFailed = kit.ReasonEngageFailed

	// ReasonClusterEngaged (Normal): the cluster is engaged.
	ReasonClusterEngaged = kit.ReasonClusterEngaged

	// ReasonCredentialsRotated (Normal): the cluster was engaged again with new credentials.
	ReasonCredentialsRotated = kit.ReasonCredentialsRotated

	// ReasonClusterDisengaged (Normal): the cluster was disengaged because the Shoot stopped
	// being usable or selected. Deleted objects get no Event.
	ReasonClusterDisengaged = kit.ReasonClusterDisengaged

	// reasonMissingData is the metric reason of a "gardener" Secret without a kubeconfig.
	reasonMissingData = "MissingKubeconfigData"
)
