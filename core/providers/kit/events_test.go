// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kit_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
)

// event is one Eventf call.
type event struct {
	regarding, related              runtime.Object
	eventType, reason, action, note string
}

// recorder keeps every Eventf call.
type recorder struct{ events []event }

func (r *recorder) Eventf(regarding, related runtime.Object, eventType, reason, action, note string, args ...any) {
	r.events = append(r.events, event{regarding, related, eventType, reason, action, fmtNote(note, args)})
}

func fmtNote(note string, args []any) string {
	if note == "%s" && len(args) == 1 {
		return args[0].(string)
	}
	return note
}

func testObject() *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}}
}

func TestEventsRecord(t *testing.T) {
	rec := &recorder{}
	e := &kit.Events{Recorder: rec, Action: "Engage"}
	var noSecret *corev1.Secret
	e.Record(testObject(), noSecret, corev1.EventTypeWarning, "Broken", strings.Repeat("x", 2000))
	e.Record(testObject(), &corev1.Secret{}, corev1.EventTypeNormal, "Fine", "short")
	e.Record(nil, nil, corev1.EventTypeNormal, "Dropped", "no object")

	if len(rec.events) != 2 {
		t.Fatalf("recorded %d events, want 2: %+v", len(rec.events), rec.events)
	}
	first := rec.events[0]
	if first.related != nil {
		t.Errorf("a typed-nil related object was passed on as %#v", first.related)
	}
	if len(first.note) != kit.MaxNoteBytes || !strings.HasSuffix(first.note, "...") {
		t.Errorf("long note has %d bytes ending %q, want %d ending ...", len(first.note), first.note[len(first.note)-3:], kit.MaxNoteBytes)
	}
	if first.action != "Engage" || first.reason != "Broken" {
		t.Errorf("action, reason = %q, %q", first.action, first.reason)
	}
	if second := rec.events[1]; second.related == nil || second.note != "short" {
		t.Errorf("second event = %+v, want the Secret as related and the note unchanged", second)
	}
	// The zero recorder records nothing and does not panic.
	(&kit.Events{}).Record(testObject(), nil, corev1.EventTypeNormal, "R", "n")
}

func TestProblemsReportOnlyChanges(t *testing.T) {
	rec := &recorder{}
	errs := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "errors_total"}, []string{"reason"})
	broken := prometheus.NewGauge(prometheus.GaugeOpts{Name: "broken"})
	ps := &kit.Problems{
		Subject: "Cluster",
		Errors:  errs,
		Broken:  broken,
		Record:  (&kit.Events{Recorder: rec, Action: "Engage"}).Record,
	}
	var logs providertest.LogBuffer
	log := logs.Logger()
	var pr kit.Problem

	ps.Report(&pr, log, testObject(), nil, "Unreachable", "Unreachable", errors.New("no route"))
	ps.Report(&pr, log, testObject(), nil, "Unreachable", "Unreachable", errors.New("no route"))
	if got := testutil.ToFloat64(errs.WithLabelValues("Unreachable")); got != 2 {
		t.Errorf("errors counted %v, want 2", got)
	}
	if got := testutil.ToFloat64(broken); got != 1 || !pr.Broken() {
		t.Errorf("broken gauge %v, Broken() %v; want 1, true", got, pr.Broken())
	}
	if len(rec.events) != 1 {
		t.Errorf("%d Events for the same problem twice, want 1", len(rec.events))
	}
	if _, err := logs.Find("Cluster still cannot be engaged", "no route"); err != nil {
		t.Error(err)
	}

	ps.Report(&pr, log, testObject(), nil, "Unauthorized", "Unauthorized", errors.New("refused"))
	if len(rec.events) != 2 || rec.events[1].reason != "Unauthorized" {
		t.Errorf("a changed problem recorded %+v, want a second Event", rec.events)
	}

	ps.Resolve(&pr, log)
	if got := testutil.ToFloat64(broken); got != 0 || pr.Broken() {
		t.Errorf("after Resolve: gauge %v, Broken() %v; want 0, false", got, pr.Broken())
	}
	if !logs.Contains("Cluster problem resolved") {
		t.Error("Resolve did not log")
	}
	// After Resolve, the same problem is new again.
	ps.Report(&pr, log, testObject(), nil, "Unauthorized", "Unauthorized", errors.New("refused"))
	if len(rec.events) != 3 {
		t.Errorf("%d Events, want 3: a resolved problem that returns is reported", len(rec.events))
	}
	ps.Drop(&pr)
	if got := testutil.ToFloat64(broken); got != 0 || pr.Broken() {
		t.Errorf("after Drop: gauge %v, Broken() %v; want 0, false", got, pr.Broken())
	}
}

func TestEventsAndProblemsRedact(t *testing.T) {
	const url = `Get "https://admin:hunter2@10.0.0.1:6443/api?token=qu3ry-t0ken": EOF`
	rec := &recorder{}
	events := &kit.Events{Recorder: rec, Action: "Engage"}
	// The note is redacted before it is cut, so that no cut URL escapes redaction.
	events.Record(testObject(), nil, corev1.EventTypeWarning, "Broken", strings.Repeat("x", kit.MaxNoteBytes-40)+url)

	var logs providertest.LogBuffer
	ps := &kit.Problems{Subject: "Cluster", Record: events.Record}
	var pr kit.Problem
	ps.Report(&pr, logs.Logger(), testObject(), nil, "Unreachable", "Unreachable", errors.New(url))

	texts := logs.Lines()
	for _, e := range rec.events {
		texts = append(texts, e.note)
	}
	if len(texts) != 3 {
		t.Fatalf("got %d log lines and Events, want 3: %q", len(texts), texts)
	}
	for _, text := range texts {
		if strings.Contains(text, "hunter2") || strings.Contains(text, "qu3ry-t0ken") || strings.Contains(text, "admin") {
			t.Errorf("not redacted: %s", text)
		}
	}
	if !strings.Contains(rec.events[1].note, "https://REDACTED@10.0.0.1:6443/api?REDACTED") {
		t.Errorf("the Event of the problem lost what is no secret: %q", rec.events[1].note)
	}
}
