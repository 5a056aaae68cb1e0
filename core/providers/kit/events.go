// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kit

import (
	"reflect"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/redact"
)

// maxNoteBytes is the limit the events.k8s.io API puts on an Event's note.
const maxNoteBytes = 1024

// eventRecorder records Events on the objects a provider watches. The zero value records
// nothing.
type eventRecorder struct {
	// Recorder records the Events, typically the host cluster's recorder for the provider's
	// reporting controller.
	Recorder events.EventRecorder

	// Action is the action of every Event, e.g. "Engage".
	Action string
}

// record records an Event on regarding, with related (which may be nil, also a typed nil such
// as a nil *corev1.Secret) as the related object. The note is passed through redact.Text; one
// longer than maxNoteBytes is then cut and ends in "...", so that the API server does not refuse
// the Event. A nil regarding records nothing.
func (e *eventRecorder) record(regarding client.Object, related runtime.Object, eventType, reason, note string) {
	if e.Recorder == nil || regarding == nil {
		return
	}
	note = redact.Text(note)
	if len(note) > maxNoteBytes {
		note = note[:maxNoteBytes-3] + "..."
	}
	if isNil(related) {
		// A typed nil in the interface would make the recorder dereference it.
		related = nil
	}
	e.Recorder.Eventf(regarding, related, eventType, reason, e.Action, "%s", note)
}

// isNil reports whether obj is nil or a nil pointer in an interface.
func isNil(obj runtime.Object) bool {
	if obj == nil {
		return true
	}
	v := reflect.ValueOf(obj)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// Problem is the problem Problems reported for one key. Keep one in the provider's state of the
// key; the zero value is no problem.
type Problem struct {
	message string
	broken  bool
}

// Problems reports the problems of keys that cannot be engaged: every attempt counts, but a log
// line and a Warning Event are produced only when a key's problem appears or changes, so that a
// key retried with backoff does not flood the log and the Events.
type Problems struct {
	// Subject names what is engaged in log messages, e.g. "Cluster" in "Cluster cannot be
	// engaged".
	Subject string

	// Errors, when not nil, counts every report by its metric reason (its one label).
	Errors *prometheus.CounterVec

	// Broken, when not nil, counts the keys with an unresolved problem.
	Broken prometheus.Gauge

	// Record records the Warning Events, typically Engine.Record. Nil records none.
	Record func(regarding client.Object, related runtime.Object, eventType, reason, note string)
}

// Report counts a failed attempt for the key whose problem is pr and, when err's message differs
// from the one reported last, logs it and records a Warning Event on regarding with reason
// eventReason (related may be nil). metricReason labels the count. err is passed through
// redact.Error before it is logged or recorded; credentials that redact.Text cannot recognize
// must not be in it.
func (ps *Problems) Report(pr *Problem, log logr.Logger, regarding client.Object, related runtime.Object, eventReason, metricReason string, err error) {
	err = redact.Error(err)
	if ps.Errors != nil {
		ps.Errors.WithLabelValues(metricReason).Inc()
	}
	if !pr.broken {
		pr.broken = true
		if ps.Broken != nil {
			ps.Broken.Inc()
		}
	}
	msg := err.Error()
	if pr.message == msg {
		log.V(1).Info(ps.Subject+" still cannot be engaged", "reason", metricReason, "error", msg)
		return
	}
	pr.message = msg
	log.Error(err, ps.Subject+" cannot be engaged", "reason", metricReason)
	if ps.Record != nil {
		ps.Record(regarding, related, corev1.EventTypeWarning, eventReason, msg)
	}
}

// Resolve clears the problem pr, if any, and logs that it is resolved. It reports whether the
// key had an unresolved problem.
func (ps *Problems) Resolve(pr *Problem, log logr.Logger) (resolved bool) {
	resolved = pr.broken
	if pr.broken {
		pr.broken = false
		if ps.Broken != nil {
			ps.Broken.Dec()
		}
	}
	if pr.message != "" {
		pr.message = ""
		log.Info(ps.Subject + " problem resolved")
	}
	return resolved
}

// Drop forgets the problem pr without logging, for a provider that stops: the key no longer
// counts as broken.
func (ps *Problems) Drop(pr *Problem) {
	if pr.broken && ps.Broken != nil {
		ps.Broken.Dec()
	}
	*pr = Problem{}
}
