// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterprofile

import "mcr.dev/core/providers/kit"

// EventSource is the reporting controller of the Events the provider records on ClusterProfiles.
const EventSource = "mcr.dev/" + providerName

// Reasons of the Events the provider records on ClusterProfiles. Warnings are recorded when a
// problem appears or changes, not again while it stays the same; each attempt still counts in
// the Errors metric.
// The reasons every provider shares (InvalidKubeconfig, ClusterSetupFailed, Unauthorized,
// ClusterUnreachable, EngageFailed, ClusterEngaged, CredentialsRotated, ClusterDisengaged) are the
// provider kit's: kit.Reason* in mcr.dev/core/providers/kit.
const (
	// ReasonNoAccessProvider (Warning): the profile lists none of the access providers of the
	// operator's provider file (status.accessProviders and the deprecated
	// status.credentialProviders), and the Secret strategy is off. The note lists both sets of
	// names. Retried when the profile changes.
	ReasonNoAccessProvider = "NoAccessProvider"

	// ReasonInvalidAccessProvider (Warning): the matching access provider cannot be turned into
	// a config: no server, an extension that does not decode, a proxy-url that does not parse,
	// or a server, proxy-url, insecure-skip-tls-verify, certificate-authority or profile-sourced
	// exec env variable refused by Options.Policy. Retried when the profile changes.
	ReasonInvalidAccessProvider = "InvalidAccessProvider"

	// ReasonCredentialPluginFailed (Warning): the exec credential plugin did not produce
	// credentials: it failed, did not answer within Options.ExecTimeout, wrote more than
	// Options.ExecMaxOutput, or printed something that is no usable ExecCredential. The note
	// says which, never what the plugin wrote; its stderr is discarded. Retried with backoff.
	// The kit's reason (kit.ReasonCredentialPluginFailed).
	ReasonCredentialPluginFailed = kit.ReasonCredentialPluginFailed

	// ReasonKubeconfigSecretMissing (Warning, Secret strategy): no Secret in the profile's
	// namespace carries both labels. Retried when a Secret appears.
	ReasonKubeconfigSecretMissing = "KubeconfigSecretMissing"

	// ReasonDeprecatedCredentialProviders (Warning): the access provider used was found in the
	// deprecated status.credentialProviders; the cluster manager should move it to
	// status.accessProviders. Recorded once per profile and provider.
	ReasonDeprecatedCredentialProviders = "DeprecatedCredentialProviders"

	// ReasonClusterUnready (Normal): an engaged profile stopped being ready; it is disengaged
	// if it stays so for Options.UnreadyGracePeriod.
	ReasonClusterUnready = "ClusterUnready"

	// Metric-only reasons.
	reasonMissingData      = "MissingKubeconfigData"
	reasonAmbiguousSecrets = "AmbiguousKubeconfigSecrets"
)
