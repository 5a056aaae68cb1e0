package kubeconfig

import (
	"mcr.dev/core/providers/kit"
)

// EventSource is the reporting controller of the Events the provider records on Secrets.
const EventSource = "mcr.dev/" + providerName

// Reasons of the Events the provider records on Secrets and of the
// mcr_kubeconfig_provider_errors_total metric. Warnings are recorded when a problem appears or
// changes, not again while it stays the same; each attempt still counts in the metric.
// Kubeconfigs refused by the Policy or undecodable get the Event reason ReasonInvalidKubeconfig;
// their metric reason is finer, one of the kubeconfig.Reason* values (ExecPlugin,
// AuthProviderPlugin, LocalFileReference, InsecureTLS, InvalidKubeconfig).
const (
	// ReasonInvalidKubeconfig (Warning): the Secret's kubeconfig is missing, cannot be decoded
	// or uses a feature Options.Policy refuses (the note names the field and the Policy field
	// that allows it). Not retried until the Secret changes.
	ReasonInvalidKubeconfig = kit.ReasonInvalidKubeconfig

	// ReasonMissingKubeconfig (metric only; Event reason InvalidKubeconfig): the data key is
	// missing or empty.
	ReasonMissingKubeconfig = "MissingKubeconfig"

	// ReasonClusterSetupFailed (Warning): Options.RESTOptions or cluster.New refused the
	// member's config, or Options.ClusterName returned an empty name. Not retried until the
	// Secret changes.
	ReasonClusterSetupFailed = kit.ReasonClusterSetupFailed

	// ReasonClusterNameConflict (Warning): another Secret owns the cluster name. Retried when
	// that Secret goes away or maps to another name.
	ReasonClusterNameConflict = "ClusterNameConflict"

	// ReasonUnauthorized (Warning): the member refused the credentials. Retried with backoff,
	// and when the Secret changes.
	ReasonUnauthorized = kit.ReasonUnauthorized

	// ReasonClusterUnreachable (Warning): the member did not answer the access check, or its
	// cache did not sync within Options.CacheSyncTimeout. Retried with backoff.
	ReasonClusterUnreachable = kit.ReasonClusterUnreachable

	// ReasonEngageFailed (Warning): the manager refused the cluster (an Aware returned an
	// error). Retried with backoff.
	ReasonEngageFailed = kit.ReasonEngageFailed

	// ReasonClusterEngaged (Normal): the Secret's cluster is engaged.
	ReasonClusterEngaged = kit.ReasonClusterEngaged

	// ReasonCredentialsRotated (Normal): the Secret's kubeconfig changed and the cluster was
	// engaged again with it.
	ReasonCredentialsRotated = kit.ReasonCredentialsRotated

	// ReasonClusterDisengaged (Normal): the cluster was disengaged although the Secret is still
	// selected (it now maps to another cluster name, or to none). Deleted and unlabeled Secrets
	// get no Event.
	ReasonClusterDisengaged = kit.ReasonClusterDisengaged
)
