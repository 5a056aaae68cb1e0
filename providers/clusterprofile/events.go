package clusterprofile

import (
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"

	"sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"mcr.dev/core/kubeconfig"
)

// EventSource is the reporting controller of the Events the provider records on ClusterProfiles.
const EventSource = "mcr.dev/clusterprofile-provider"

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
	ReasonInvalidKubeconfig = kubeconfig.ReasonInvalid

	// ReasonUnauthorized (Warning): the member refused the credentials. Retried with backoff.
	ReasonUnauthorized = "Unauthorized"

	// ReasonClusterUnreachable (Warning): the member did not answer, or its cache did not sync
	// within Options.CacheSyncTimeout. Retried with backoff.
	ReasonClusterUnreachable = "ClusterUnreachable"

	// ReasonEngageFailed (Warning): the manager refused the cluster (an Aware returned an
	// error). Retried with backoff.
	ReasonEngageFailed = "EngageFailed"

	// ReasonDeprecatedCredentialProviders (Warning): the access provider used was found in the
	// deprecated status.credentialProviders; the cluster manager should move it to
	// status.accessProviders. Recorded once per profile and provider.
	ReasonDeprecatedCredentialProviders = "DeprecatedCredentialProviders"

	// ReasonClusterEngaged (Normal): the cluster is engaged.
	ReasonClusterEngaged = "ClusterEngaged"

	// ReasonCredentialsRotated (Normal): the endpoint or credentials changed and the cluster was
	// engaged again with them.
	ReasonCredentialsRotated = "CredentialsRotated"

	// ReasonClusterUnready (Normal): an engaged profile stopped being ready; it is disengaged
	// if it stays so for Options.UnreadyGracePeriod.
	ReasonClusterUnready = "ClusterUnready"

	// ReasonClusterDisengaged (Normal): the cluster was disengaged because the profile stayed
	// unready for the grace period or stopped being selected. Deleted profiles get no Event.
	ReasonClusterDisengaged = "ClusterDisengaged"

	// Metric-only reasons.
	reasonMissingData      = "MissingKubeconfigData"
	reasonAmbiguousSecrets = "AmbiguousKubeconfigSecrets"
)

// eventAction is the action of every Event the provider records.
const eventAction = "Engage"

// maxNoteBytes is the limit the events.k8s.io API puts on an Event's note.
const maxNoteBytes = 1024

// event records an Event on a ClusterProfile, with the kubeconfig Secret (or nil) as related
// object.
func (p *Provider) event(regarding *v1alpha1.ClusterProfile, related *corev1.Secret, eventType, reason, note string) {
	if p.recorder == nil {
		return
	}
	if len(note) > maxNoteBytes {
		note = note[:maxNoteBytes-3] + "..."
	}
	if related == nil {
		// A typed nil in the interface would make the recorder dereference it.
		p.recorder.Eventf(regarding, nil, eventType, reason, eventAction, "%s", note)
		return
	}
	p.recorder.Eventf(regarding, related, eventType, reason, eventAction, "%s", note)
}

// problem reports that a ready profile cannot be engaged (or re-engaged): it counts the attempt
// and, when the problem is new or different, logs it and records a Warning Event on the
// profile. err must not contain credentials: the provider's errors name objects and fields only.
func (p *Provider) problem(st *profileState, cp *v1alpha1.ClusterProfile, related *corev1.Secret, log logr.Logger, eventReason, metricReason string, err error) {
	Errors.WithLabelValues(metricReason).Inc()
	if !st.broken {
		st.broken = true
		BrokenClusters.Inc()
	}
	msg := err.Error()
	if st.problem == msg {
		log.V(1).Info("Cluster still cannot be engaged", "reason", metricReason, "error", msg)
		return
	}
	st.problem = msg
	log.Error(err, "Cluster cannot be engaged", "reason", metricReason)
	p.event(cp, related, corev1.EventTypeWarning, eventReason, msg)
}

// resolved clears the reported problem of a profile, if any.
func (p *Provider) resolved(st *profileState, log logr.Logger) {
	if st.broken {
		st.broken = false
		BrokenClusters.Dec()
	}
	if st.problem != "" {
		st.problem = ""
		log.Info("Cluster problem resolved")
	}
}
