// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package fleetstatus_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"mcr.dev/core/fleetstatus"
	"mcr.dev/core/multicluster"
)

// t0 is the fake clock's start; API times have whole seconds.
var t0 = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// writes records the write requests a client sends to the hub's kube-apiserver: status
// patches, with the HTTP status each got, and any other write, which the Aggregator must never
// make.
type writes struct {
	mu      sync.Mutex
	patches []int
	other   []string
	// beforePatch, when set, runs before each status patch is sent.
	beforePatch func(ctx context.Context)
}

func (w *writes) patchCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.patches)
}

// countWrites returns a client of the hub's kube-apiserver, like hubClient's, whose requests
// pass through a recording round tripper: status patches are sent and their responses' status
// codes recorded in the returned writes; any other write is recorded and refused without being
// sent, and fails the test.
func countWrites(t *testing.T) (client.Client, *writes) {
	t.Helper()
	w := &writes{}
	t.Cleanup(func() {
		if len(w.other) > 0 {
			t.Errorf("writes other than status patches: %v", w.other)
		}
	})
	cfg := fleet.Member("hub").Config()
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			switch {
			case req.Method == http.MethodGet:
				return rt.RoundTrip(req)
			case req.Method == http.MethodPatch && strings.HasSuffix(req.URL.Path, "/status"):
				if w.beforePatch != nil {
					w.beforePatch(req.Context())
				}
				resp, err := rt.RoundTrip(req)
				w.mu.Lock()
				defer w.mu.Unlock()
				if err != nil {
					w.patches = append(w.patches, 0)
					return nil, err
				}
				w.patches = append(w.patches, resp.StatusCode)
				return resp, nil
			default:
				w.mu.Lock()
				defer w.mu.Unlock()
				w.other = append(w.other, req.Method+" "+req.URL.Path)
				return nil, fmt.Errorf("unexpected %s %s", req.Method, req.URL.Path)
			}
		})
	}
	s := runtime.NewScheme()
	if err := addWidgets(s); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return c, w
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// createWidget creates a Widget in a namespace of its own and returns it as stored.
func createWidget(t *testing.T, c client.Client, name string) *Widget {
	t.Helper()
	w := &Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Spec: WidgetSpec{Color: "blue"}}
	if err := c.Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), w) })
	return w
}

// get reads a Widget as the API server has it.
func get(t *testing.T, c client.Client, w *Widget) *Widget {
	t.Helper()
	got := &Widget{}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(w), got); err != nil {
		t.Fatal(err)
	}
	return got
}

func update(t *testing.T, agg *fleetstatus.Aggregator, w *Widget, results ...fleetstatus.Result) reconcile.Result {
	t.Helper()
	res, err := agg.Update(t.Context(), w, results)
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	return res
}

func summaryOf(t *testing.T, w *Widget) metav1.Condition {
	t.Helper()
	c := meta.FindStatusCondition(w.Status.Conditions, "FleetSynced")
	if c == nil {
		t.Fatalf("no FleetSynced condition in %+v", w.Status.Conditions)
	}
	return *c
}

func clusterCondition(t *testing.T, w *Widget, cluster string) fleetstatus.ClusterCondition {
	t.Helper()
	for _, c := range w.Status.Clusters {
		if c.Cluster == cluster {
			return c
		}
	}
	t.Fatalf("no condition of cluster %s in %+v", cluster, w.Status.Clusters)
	return fleetstatus.ClusterCondition{}
}

func forbidden() error {
	return apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "settings", errors.New("RBAC"))
}

// A status is written when it changes and only then; transition times move only with the
// status, for each cluster and for the summary.
func TestUpdateWritesOnlyOnChange(t *testing.T) {
	hub := hubClient(t)
	c, writes := countWrites(t)
	clock := clocktesting.NewFakePassiveClock(t0)
	agg := fleetstatus.New(c, fleetstatus.Options{Clock: clock})
	w := createWidget(t, hub, "only-on-change")

	if res := update(t, agg, w, fleetstatus.FromError("a", nil), fleetstatus.FromError("b", nil)); res != (reconcile.Result{}) {
		t.Errorf("first Update returned %+v, want no requeue", res)
	}
	if n := writes.patchCount(); n != 1 {
		t.Fatalf("%d writes after the first Update, want 1", n)
	}
	got := get(t, hub, w)
	if got.ResourceVersion != w.ResourceVersion {
		t.Errorf("the object Update left has resourceVersion %s, the server %s", w.ResourceVersion, got.ResourceVersion)
	}
	if s := summaryOf(t, got); s.Status != metav1.ConditionTrue || s.Reason != fleetstatus.ReasonAllReady || s.Message != "Synced 2/2" ||
		s.ObservedGeneration != got.Generation || !s.LastTransitionTime.Time.Equal(t0) {
		t.Errorf("summary %+v, want True AllReady \"Synced 2/2\" at %v for generation %d", s, t0, got.Generation)
	}
	if got.Status.ReadyClusters != 2 || got.Status.TotalClusters != 2 {
		t.Errorf("counts %d/%d, want 2/2", got.Status.ReadyClusters, got.Status.TotalClusters)
	}

	// The same results later, past MinInterval: nothing to write.
	clock.SetTime(t0.Add(time.Minute))
	w = get(t, hub, w)
	rv := w.ResourceVersion
	if res := update(t, agg, w, fleetstatus.FromError("a", nil), fleetstatus.FromError("b", nil)); res != (reconcile.Result{}) {
		t.Errorf("unchanged Update returned %+v, want no requeue", res)
	}
	if n := writes.patchCount(); n != 1 {
		t.Errorf("%d writes after an unchanged Update, want still 1", n)
	}
	if got := get(t, hub, w); got.ResourceVersion != rv {
		t.Errorf("resourceVersion %s after an unchanged Update, want %s", got.ResourceVersion, rv)
	}

	// b fails: its condition and the summary transition, a's condition keeps its time.
	t2 := t0.Add(2 * time.Minute)
	clock.SetTime(t2)
	update(t, agg, get(t, hub, w), fleetstatus.FromError("a", nil), fleetstatus.FromError("b", forbidden()))
	if n := writes.patchCount(); n != 2 {
		t.Fatalf("%d writes after b failed, want 2", n)
	}
	got = get(t, hub, w)
	if a := clusterCondition(t, got, "a"); !a.LastTransitionTime.Time.Equal(t0) || a.Status != metav1.ConditionTrue {
		t.Errorf("a: %+v, want True since %v", a, t0)
	}
	if b := clusterCondition(t, got, "b"); !b.LastTransitionTime.Time.Equal(t2) || b.Status != metav1.ConditionFalse || b.Reason != "Forbidden" {
		t.Errorf("b: %+v, want False Forbidden since %v", b, t2)
	}
	if s := summaryOf(t, got); s.Status != metav1.ConditionFalse || s.Reason != fleetstatus.ReasonNotReady ||
		s.Message != "Synced 1/2, failing: b (Forbidden)" || !s.LastTransitionTime.Time.Equal(t2) {
		t.Errorf("summary %+v, want False NotReady \"Synced 1/2, failing: b (Forbidden)\" since %v", s, t2)
	}
	if got.Status.ReadyClusters != 1 || got.Status.TotalClusters != 2 {
		t.Errorf("counts %d/%d, want 1/2", got.Status.ReadyClusters, got.Status.TotalClusters)
	}

	// b fails for another reason: written, but no transition.
	clock.SetTime(t0.Add(3 * time.Minute))
	update(t, agg, get(t, hub, w), fleetstatus.FromError("a", nil), fleetstatus.FromError("b", context.DeadlineExceeded))
	if n := writes.patchCount(); n != 3 {
		t.Fatalf("%d writes after b's reason changed, want 3", n)
	}
	got = get(t, hub, w)
	if b := clusterCondition(t, got, "b"); !b.LastTransitionTime.Time.Equal(t2) || b.Reason != fleetstatus.ReasonTimeout {
		t.Errorf("b: %+v, want Timeout since %v", b, t2)
	}
	if s := summaryOf(t, got); !s.LastTransitionTime.Time.Equal(t2) || s.Message != "Synced 1/2, failing: b (Timeout)" {
		t.Errorf("summary %+v, want \"Synced 1/2, failing: b (Timeout)\" since %v", s, t2)
	}

	// A new generation is a change: every condition reports it.
	w = get(t, hub, w)
	w.Spec.Color = "green"
	if err := hub.Update(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	clock.SetTime(t0.Add(4 * time.Minute))
	update(t, agg, w, fleetstatus.FromError("a", nil), fleetstatus.FromError("b", context.DeadlineExceeded))
	got = get(t, hub, w)
	if n := writes.patchCount(); n != 4 {
		t.Errorf("%d writes after a new generation, want 4", n)
	}
	for _, c := range got.Status.Clusters {
		if c.ObservedGeneration != got.Generation {
			t.Errorf("%s: observedGeneration %d, want %d", c.Cluster, c.ObservedGeneration, got.Generation)
		}
	}
	if s := summaryOf(t, got); s.ObservedGeneration != got.Generation {
		t.Errorf("summary observedGeneration %d, want %d", s.ObservedGeneration, got.Generation)
	}
}

// Changes within MinInterval of a write are deferred, with a requeue for the end of the
// interval, and written then as one.
func TestUpdateCoalesces(t *testing.T) {
	hub := hubClient(t)
	c, writes := countWrites(t)
	clock := clocktesting.NewFakePassiveClock(t0)
	agg := fleetstatus.New(c, fleetstatus.Options{Clock: clock, MinInterval: time.Hour})
	w := createWidget(t, hub, "coalesce")

	update(t, agg, w, fleetstatus.FromError("a", nil))
	if n := writes.patchCount(); n != 1 {
		t.Fatalf("%d writes after the first Update, want 1", n)
	}
	// Members join one by one, each within the interval.
	results := []fleetstatus.Result{fleetstatus.FromError("a", nil)}
	for i := 1; i <= 5; i++ {
		clock.SetTime(t0.Add(time.Duration(i) * time.Minute))
		results = append(results, fleetstatus.FromError(multicluster.ClusterName(fmt.Sprintf("m%d", i)), nil))
		w := get(t, hub, w)
		res := update(t, agg, w, results...)
		if want := time.Hour - time.Duration(i)*time.Minute; res.RequeueAfter != want {
			t.Errorf("Update %d returned RequeueAfter %v, want %v", i, res.RequeueAfter, want)
		}
		if w.Status.TotalClusters != 1 || len(w.Status.Clusters) != 1 {
			t.Errorf("Update %d left a deferred status in the object: %+v", i, w.Status)
		}
	}
	if n := writes.patchCount(); n != 1 {
		t.Errorf("%d writes within the interval, want 1", n)
	}

	// The requeue at the end of the interval writes the latest status.
	clock.SetTime(t0.Add(time.Hour))
	if res := update(t, agg, get(t, hub, w), results...); res != (reconcile.Result{}) {
		t.Errorf("Update at the end of the interval returned %+v, want no requeue", res)
	}
	if n := writes.patchCount(); n != 2 {
		t.Errorf("%d writes after the interval, want 2", n)
	}
	if got := get(t, hub, w); got.Status.TotalClusters != 6 || summaryOf(t, got).Message != "Synced 6/6" {
		t.Errorf("status after the interval: %+v", got.Status)
	}

	// A negative MinInterval writes every change.
	eager := fleetstatus.New(c, fleetstatus.Options{Clock: clock, MinInterval: -1})
	for i := range 3 {
		update(t, eager, get(t, hub, w), fleetstatus.FromError("a", nil), fleetstatus.FromError("x", fmt.Errorf("attempt %d", i)))
	}
	if n := writes.patchCount(); n != 5 {
		t.Errorf("%d writes after 3 changes without an interval, want 5", n)
	}
}

// A write that loses to a concurrent one is retried on a fresh read, and keeps what the other
// writer wrote.
func TestUpdateRetriesConflict(t *testing.T) {
	hub := hubClient(t)
	c, writes := countWrites(t)
	agg := fleetstatus.New(c, fleetstatus.Options{Clock: clocktesting.NewFakePassiveClock(t0)})
	w := createWidget(t, hub, "conflict")

	var once sync.Once
	writes.beforePatch = func(ctx context.Context) {
		once.Do(func() {
			other := get(t, hub, w)
			meta.SetStatusCondition(&other.Status.Conditions, metav1.Condition{
				Type: "Healthy", Status: metav1.ConditionTrue, Reason: "Checked", Message: "another controller",
			})
			if err := hub.Status().Update(ctx, other); err != nil {
				t.Errorf("concurrent status update: %v", err)
			}
		})
	}
	update(t, agg, w, fleetstatus.FromError("a", nil), fleetstatus.FromError("b", nil))

	writes.mu.Lock()
	patches := append([]int(nil), writes.patches...)
	writes.mu.Unlock()
	if len(patches) != 2 || patches[0] != http.StatusConflict || patches[1] != http.StatusOK {
		t.Fatalf("status patches answered %v, want a conflict (409), then success (200)", patches)
	}
	got := get(t, hub, w)
	if meta.FindStatusCondition(got.Status.Conditions, "Healthy") == nil {
		t.Errorf("the concurrent writer's condition is gone: %+v", got.Status.Conditions)
	}
	if s := summaryOf(t, got); s.Message != "Synced 2/2" {
		t.Errorf("summary %+v after the retry", s)
	}
	if w.ResourceVersion != got.ResourceVersion || meta.FindStatusCondition(w.Status.Conditions, "Healthy") == nil {
		t.Errorf("the object Update left (resourceVersion %s, conditions %+v) is not the one written (%s)",
			w.ResourceVersion, w.Status.Conditions, got.ResourceVersion)
	}
}

// Clusters without a result have left the fleet: they are dropped. The local cluster has a
// name in the status.
func TestUpdateDropsClustersThatLeft(t *testing.T) {
	hub := hubClient(t)
	clock := clocktesting.NewFakePassiveClock(t0)
	agg := fleetstatus.New(hub, fleetstatus.Options{Clock: clock, MinInterval: -1})
	w := createWidget(t, hub, "departures")

	update(t, agg, w, fleetstatus.FromError("a", nil), fleetstatus.FromError("b", forbidden()), fleetstatus.FromError("", nil))
	update(t, agg, get(t, hub, w), fleetstatus.FromError("a", nil), fleetstatus.FromError("", nil))
	got := get(t, hub, w)
	var names []string
	for _, c := range got.Status.Clusters {
		names = append(names, c.Cluster)
	}
	if strings.Join(names, ",") != "(local),a" || got.Status.TotalClusters != 2 || summaryOf(t, got).Status != metav1.ConditionTrue {
		t.Errorf("after b left: clusters %v, status %+v", names, got.Status)
	}

	update(t, agg, got)
	got = get(t, hub, w)
	if s := summaryOf(t, got); len(got.Status.Clusters) != 0 || got.Status.TotalClusters != 0 ||
		s.Status != metav1.ConditionTrue || s.Reason != fleetstatus.ReasonNoClusters {
		t.Errorf("without clusters: %+v, summary %+v", got.Status, s)
	}
}

// Messages are redacted of credentials and cut to their bound, in the object as stored; so is
// the summary.
func TestUpdateRedactsAndBounds(t *testing.T) {
	hub := hubClient(t)
	agg := fleetstatus.New(hub, fleetstatus.Options{Clock: clocktesting.NewFakePassiveClock(t0), MaxSummaryLength: 200})
	w := createWidget(t, hub, "bounds")

	const secret, token = "s3cr3t-passw0rd", "tok3n-value-123"
	leaky := fmt.Errorf(`Get "https://admin:%s@east.example.com/api/v1/namespaces?token=%s": %w`, secret, token, context.DeadlineExceeded)
	results := []fleetstatus.Result{
		fleetstatus.FromError("east", leaky),
		{Cluster: "long", Status: metav1.ConditionFalse, Message: strings.Repeat("é", 2000)},
	}
	for i := range 100 {
		results = append(results, fleetstatus.FromError(multicluster.ClusterName(fmt.Sprintf("member-%03d", i)), forbidden()))
	}
	update(t, agg, w, results...)
	got := get(t, hub, w)

	east := clusterCondition(t, got, "east")
	if strings.Contains(east.Message, secret) || strings.Contains(east.Message, token) || !strings.Contains(east.Message, "east.example.com") {
		t.Errorf("east's message is not redacted as it should be: %q", east.Message)
	}
	if east.Reason != fleetstatus.ReasonTimeout {
		t.Errorf("east's reason %q, want %s", east.Reason, fleetstatus.ReasonTimeout)
	}
	long := clusterCondition(t, got, "long")
	if len(long.Message) > fleetstatus.DefaultMaxMessageLength || !strings.HasSuffix(long.Message, "é...") {
		t.Errorf("long message: %d bytes, ending %q; want at most %d, cut after a whole character",
			len(long.Message), long.Message[max(0, len(long.Message)-10):], fleetstatus.DefaultMaxMessageLength)
	}
	s := summaryOf(t, got)
	if len(s.Message) > 200 || !strings.HasPrefix(s.Message, "Synced 0/102, failing: east (Timeout), long (Failed), member-000 (Forbidden)") ||
		!strings.HasSuffix(s.Message, " more") {
		t.Errorf("summary (%d bytes): %q", len(s.Message), s.Message)
	}
}

// An object deleted meanwhile is no error.
func TestUpdateObjectGone(t *testing.T) {
	hub := hubClient(t)
	agg := fleetstatus.New(hub, fleetstatus.Options{})
	w := createWidget(t, hub, "gone")
	if err := hub.Delete(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	if res, err := agg.Update(t.Context(), w, []fleetstatus.Result{fleetstatus.FromError("a", nil)}); err != nil || res != (reconcile.Result{}) {
		t.Errorf("Update of a deleted object: %+v, %v; want no requeue, no error", res, err)
	}
}
