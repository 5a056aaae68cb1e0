package clusterprofile

import (
	"mcr.dev/core/providers/kit"
)

// EventSource is the reporting controller of the Events the provider records on ClusterProfiles.
const EventSource = "mcr.dev/" + providerName

// Reasons of the Events the provider records on ClusterProfiles. Warnings are recorded when a
// problem appears or changes, not again while it stays the same; each attempt still counts in
// the Errors metric.
const (
	// ReasonNoAccessProvider (Warning): the profile lists none of the access providers of the
	// operator's provider file (status.accessProviders and the deprecated
	// status.credentialProviders), and the Secret strategy is off. The note lists both sets of
	// names. Retried when the profile changes.
	ReasonNoAccessProvider = "NoAccessProvider"

	// ReasonInvalidAccessProvider (Warning): the matching access provider cannot be turned into
	// a config: no server, an extension that does not decode, a proxy-url that does not parse,
	// or insecure-skip-tls-verify / certificate-authority refused by Options.Policy. Retried
	// when the profile changes.
	ReasonInvalidAccessProvider = "InvalidAccessProvider"

	// ReasonCredentialPluginFailed (Warning): the exec credential plugin did not produce
	// credentials (it failed, or printed something client-go refused); the plugin's own
	// message is on the controller's stderr. Retried with backoff.
	ReasonCredentialPluginFailed = "CredentialPluginFailed"

	// ReasonKubeconfigSecretMissing (Warning, Secret strategy): no Secret in the profile's
	// namespace carries both labels. Retried when a Secret appears.
	ReasonKubeconfigSecretMissing = "KubeconfigSecretMissing"

	// ReasonInvalidKubeconfig (Warning, Secret strategy): several Secrets match, the Secret has
	// no "Config" data, or its kubeconfig cannot be decoded or uses a feature Options.Policy
	// refuses (the note names the field and the Policy field that allows it). Retried when the
	// Secret changes.
	ReasonInvalidKubeconfig = kit.ReasonInvalidKubeconfig

	// ReasonClusterSetupFailed (Warning): an Options.RESTOptions function failed or
	// controller-runtime refused the member's rest.Config. Retried when the profile or Secret
	// changes, and at every resync.
	ReasonClusterSetupFailed = kit.ReasonClusterSetupFailed

	// ReasonUnauthorized (Warning): the member refused the credentials. Retried with backoff.
	ReasonUnauthorized = kit.ReasonUnauthorized

	// ReasonClusterUnreachable (Warning): the member did not answer, or its cache did not sync
	// within Options.CacheSyncTimeout. Retried with backoff.
	ReasonClusterUnreachable = kit.ReasonClusterUnreachable

	// ReasonEngageFailed (Warning): the manager refused the cluster (an Aware returned an
	// error). Retried with backoff.
	ReasonEngageFailed = kit.ReasonEngageFailed

	// ReasonDeprecatedCredentialProviders (Warning): the access provider used was found in the
	// deprecated status.credentialProviders; the cluster manager should move it to
	// status.accessProviders. Recorded once per profile and provider.
	ReasonDeprecatedCredentialProviders = "DeprecatedCredentialProviders"

	// ReasonClusterEngaged (Normal): the cluster is engaged.
	ReasonClusterEngaged = kit.ReasonClusterEngaged

	// ReasonCredentialsRotated (Normal): the endpoint or credentials changed and the cluster was
	// engaged again with them.
	ReasonCredentialsRotated = kit.ReasonCredentialsRotated

	// ReasonClusterUnready (Normal): an engaged profile stopped being ready; it is disengaged
	// if it stays so for Options.UnreadyGracePeriod.
	ReasonClusterUnready = "ClusterUnready"

	// ReasonClusterDisengaged (Normal): the cluster was disengaged because the profile stayed
	// unready for the grace period or stopped being selected. Deleted profiles get no Event.
	ReasonClusterDisengaged = kit.ReasonClusterDisengaged

	// Metric-only reasons.
	reasonMissingData      = "MissingKubeconfigData"
	reasonAmbiguousSecrets = "AmbiguousKubeconfigSecrets"
)
