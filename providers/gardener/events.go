package gardener

import (
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/kubeconfig"
)

// EventSource is the reporting controller of the Events the provider records on Shoots and
// seed Cluster objects.
const EventSource = "mcr.dev/gardener-provider"

// Reasons of the Events the provider records on Shoots (garden) and Cluster objects (seed).
// Warnings are recorded when a problem appears or changes, not again while it stays the same;
// each attempt still counts in the Errors metric.
const (
	// ReasonAdminKubeconfigFailed (Warning, garden): the adminkubeconfig subresource refused to
	// issue credentials (Forbidden: RBAC; Invalid: e.g. no advertised address yet) or did not
	// answer. Retried with backoff.
	ReasonAdminKubeconfigFailed = "AdminKubeconfigFailed"

	// ReasonCredentialsExpired (Warning, garden): the engaged cluster's admin credentials
	// expired before new ones could be obtained, so it was disengaged. Retried with backoff.
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
	ReasonInvalidKubeconfig = kubeconfig.ReasonInvalid

	// ReasonUnauthorized (Warning): the shoot refused the credentials. Retried with backoff.
	ReasonUnauthorized = "Unauthorized"

	// ReasonClusterUnreachable (Warning): the shoot's API server did not answer, or its cache did
	// not sync within Options.CacheSyncTimeout. Retried with backoff.
	ReasonClusterUnreachable = "ClusterUnreachable"

	// ReasonEngageFailed (Warning): the manager refused the cluster (an Aware returned an
	// error). Retried with backoff.
	ReasonEngageFailed = "EngageFailed"

	// ReasonClusterEngaged (Normal): the cluster is engaged.
	ReasonClusterEngaged = "ClusterEngaged"

	// ReasonCredentialsRotated (Normal): the cluster was engaged again with new credentials.
	ReasonCredentialsRotated = "CredentialsRotated"

	// ReasonClusterDisengaged (Normal): the cluster was disengaged because the Shoot stopped
	// being usable or selected. Deleted objects get no Event.
	ReasonClusterDisengaged = "ClusterDisengaged"

	// reasonMissingData is the metric reason of a "gardener" Secret without a kubeconfig.
	reasonMissingData = "MissingKubeconfigData"
)

// eventAction is the action of every Event the provider records.
const eventAction = "Engage"

// maxNoteBytes is the limit the events.k8s.io API puts on an Event's note.
const maxNoteBytes = 1024

// event records an Event on a Shoot or Cluster object, with related (a Secret, or nil) as the
// related object.
func (p *Provider) event(regarding client.Object, related *corev1.Secret, eventType, reason, note string) {
	if p.recorder == nil || regarding == nil {
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
	var rel runtime.Object = related
	p.recorder.Eventf(regarding, rel, eventType, reason, eventAction, "%s", note)
}

// problem reports that a usable Shoot cannot be engaged (or re-engaged): it counts the attempt
// and, when the problem is new or different, logs it and records a Warning Event on obj. err
// must not contain credentials: the provider's errors name objects and fields only.
func (p *Provider) problem(st *memberState, obj client.Object, related *corev1.Secret, log logr.Logger, eventReason, metricReason string, err error) {
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
	p.event(obj, related, corev1.EventTypeWarning, eventReason, msg)
}

// resolved clears the reported problem of an object, if any.
func (p *Provider) resolved(st *memberState, log logr.Logger) {
	if st.broken {
		st.broken = false
		BrokenClusters.Dec()
	}
	if st.problem != "" {
		st.problem = ""
		log.Info("Cluster problem resolved")
	}
}
