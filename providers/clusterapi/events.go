package clusterapi

import (
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/kubeconfig"
)

// EventSource is the reporting controller of the Events the provider records on Clusters.
const EventSource = "mcr.dev/clusterapi-provider"

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
	ReasonInvalidKubeconfig = kubeconfig.ReasonInvalid

	// ReasonUnauthorized (Warning): the workload cluster refused the kubeconfig's credentials.
	// Retried with backoff, and when the Secret changes.
	ReasonUnauthorized = "Unauthorized"

	// ReasonClusterUnreachable (Warning): the workload cluster did not answer, or its cache did
	// not sync within Options.CacheSyncTimeout. Retried with backoff.
	ReasonClusterUnreachable = "ClusterUnreachable"

	// ReasonEngageFailed (Warning): the manager refused the cluster (an Aware returned an
	// error). Retried with backoff.
	ReasonEngageFailed = "EngageFailed"

	// ReasonClusterEngaged (Normal): the cluster is engaged.
	ReasonClusterEngaged = "ClusterEngaged"

	// ReasonCredentialsRotated (Normal): the kubeconfig changed and the cluster was engaged
	// again with it.
	ReasonCredentialsRotated = "CredentialsRotated"

	// ReasonClusterDisengaged (Normal): the cluster was disengaged because the Cluster stopped
	// being ready or selected. Deleted Clusters get no Event.
	ReasonClusterDisengaged = "ClusterDisengaged"

	// reasonMissingData is the metric reason of a kubeconfig Secret without data under "value".
	reasonMissingData = "MissingKubeconfigData"
)

// eventAction is the action of every Event the provider records.
const eventAction = "Engage"

// maxNoteBytes is the limit the events.k8s.io API puts on an Event's note.
const maxNoteBytes = 1024

// event records an Event on a Cluster, with related (a Secret, or nil) as the related object.
func (p *Provider) event(regarding client.Object, related runtime.Object, eventType, reason, note string) {
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

// problem reports that a ready Cluster cannot be engaged (or re-engaged): it counts the attempt
// and, when the problem is new or different, logs it and records a Warning Event on the Cluster.
// err must not contain credentials: the provider's errors name objects and fields only.
func (p *Provider) problem(st *clusterState, obj client.Object, related *corev1.Secret, log logr.Logger, eventReason, metricReason string, err error) {
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
	if related != nil {
		p.event(obj, related, corev1.EventTypeWarning, eventReason, msg)
	} else {
		p.event(obj, nil, corev1.EventTypeWarning, eventReason, msg)
	}
}

// resolved clears the reported problem of a Cluster, if any.
func (p *Provider) resolved(st *clusterState, log logr.Logger) {
	if st.broken {
		st.broken = false
		BrokenClusters.Dec()
	}
	if st.problem != "" {
		st.problem = ""
		log.Info("Cluster problem resolved")
	}
}
