package milo

import (
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// EventSource is the reporting controller of the Events the provider records on Projects and
// ProjectControlPlanes.
const EventSource = "mcr.dev/milo-provider"

// Reasons of the Events the provider records on the watched objects (Projects in ModeProject,
// ProjectControlPlanes in ModeProjectControlPlane). Warnings are recorded when a problem appears
// or changes, not again while it stays the same; each attempt still counts in the Errors metric.
const (
	// ReasonInvalidConfig (Warning): the project's rest.Config could not be built (an
	// Options.RESTOptions function failed) or controller-runtime refused it. Retried when the
	// object changes, and at every resync.
	ReasonInvalidConfig = "InvalidConfig"

	// ReasonUnauthorized (Warning): the project's control plane refused the provider's
	// credentials. Retried with backoff.
	ReasonUnauthorized = "Unauthorized"

	// ReasonClusterUnreachable (Warning): the project's control plane did not answer, or its
	// cache did not sync within Options.CacheSyncTimeout. Retried with backoff.
	ReasonClusterUnreachable = "ClusterUnreachable"

	// ReasonEngageFailed (Warning): the manager refused the cluster (an Aware returned an
	// error). Retried with backoff.
	ReasonEngageFailed = "EngageFailed"

	// ReasonClusterEngaged (Normal): the project's control plane is engaged.
	ReasonClusterEngaged = "ClusterEngaged"

	// ReasonProjectUnready (Normal): an engaged project stopped being ready; it stays engaged
	// for Options.UnreadyGracePeriod and is disengaged if it is not ready by then.
	ReasonProjectUnready = "ProjectUnready"

	// ReasonClusterDisengaged (Normal): the project's control plane was disengaged because the
	// object stayed unready past the grace period or stopped being selected. Deleted objects get
	// no Event.
	ReasonClusterDisengaged = "ClusterDisengaged"
)

// eventAction is the action of every Event the provider records.
const eventAction = "Engage"

// maxNoteBytes is the limit the events.k8s.io API puts on an Event's note.
const maxNoteBytes = 1024

// event records an Event on a watched object.
func (p *Provider) event(regarding client.Object, eventType, reason, note string) {
	if p.recorder == nil {
		return
	}
	if len(note) > maxNoteBytes {
		note = note[:maxNoteBytes-3] + "..."
	}
	p.recorder.Eventf(regarding, nil, eventType, reason, eventAction, "%s", note)
}

// problem reports that a ready project cannot be engaged: it counts the attempt and, when the
// problem is new or different, logs it and records a Warning Event on the object. err must not
// contain credentials: the provider's errors name objects, options and hosts only.
func (p *Provider) problem(st *projectState, obj client.Object, log logr.Logger, reason string, err error) {
	Errors.WithLabelValues(reason).Inc()
	if !st.broken {
		st.broken = true
		BrokenProjects.Inc()
	}
	msg := err.Error()
	if st.problem == msg {
		log.V(1).Info("Project still cannot be engaged", "reason", reason, "error", msg)
		return
	}
	st.problem = msg
	log.Error(err, "Project cannot be engaged", "reason", reason)
	p.event(obj, corev1.EventTypeWarning, reason, msg)
}

// resolved clears the reported problem of a project, if any.
func (p *Provider) resolved(st *projectState, log logr.Logger) {
	if st.broken {
		st.broken = false
		BrokenProjects.Dec()
	}
	if st.problem != "" {
		st.problem = ""
		log.Info("Project problem resolved")
	}
}
