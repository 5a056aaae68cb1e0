// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package workqueue

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	kworkqueue "k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"

	"mcr.dev/core/internal/testcheck"
	"mcr.dev/core/metrics"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/core/reconcile"
)

// newGatedQueue returns a queue on a fake clock whose rate limiter retries at once, so that a
// failed request is ready again at its Done. It is named after the test, for its metrics.
func newGatedQueue(t *testing.T, opts Options) (*clusterFair[reconcile.Request], *clocktesting.FakeClock) {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	noDelay := kworkqueue.NewTypedItemFastSlowRateLimiter[reconcile.Request](0, 0, 0)
	q := newClusterFair[reconcile.Request](t.Name(), noDelay, opts, clk)
	t.Cleanup(q.ShutDown)
	return q, clk
}

// fail processes item as controller-runtime does when Reconcile returns an error.
func fail(t *testing.T, q *clusterFair[reconcile.Request], item reconcile.Request) {
	t.Helper()
	if got := mustGet(t, q); got != item {
		t.Fatalf("Get() = %v, want %v", got, item)
	}
	q.AddRateLimited(item)
	q.Done(item)
}

// succeed processes item as controller-runtime does when Reconcile succeeds.
func succeed(t *testing.T, q *clusterFair[reconcile.Request], item reconcile.Request) {
	t.Helper()
	if got := mustGet(t, q); got != item {
		t.Fatalf("Get() = %v, want %v", got, item)
	}
	q.Forget(item)
	q.Done(item)
}

// stateOf returns the state whose mcr_cluster_breaker_state series is 1 for the cluster, and
// fails unless every other state's series is 0.
func stateOf(t *testing.T, cluster string) string {
	t.Helper()
	current := ""
	for _, state := range []string{metrics.BreakerClosed, metrics.BreakerHalfOpen, metrics.BreakerOpen} {
		switch v := testutil.ToFloat64(metrics.ClusterBreakerState.WithLabelValues(t.Name(), cluster, state)); {
		case v == 1 && current == "":
			current = state
		case v != 0:
			t.Fatalf("mcr_cluster_breaker_state{cluster=%q,state=%q} = %v besides state %q", cluster, state, v, current)
		}
	}
	return current
}

func transitions(t *testing.T, cluster, state string) float64 {
	t.Helper()
	return testutil.ToFloat64(metrics.ClusterBreakerTransitions.WithLabelValues(t.Name(), cluster, state))
}

// getAsync calls Get in a goroutine once the test has no Get blocked, and returns what it gets.
func getAsync(t *testing.T, q *clusterFair[reconcile.Request]) <-chan reconcile.Request {
	t.Helper()
	got := make(chan reconcile.Request, 1)
	go func() {
		item, shutdown := q.Get()
		if !shutdown {
			got <- item
		}
		close(got)
	}()
	testcheck.WaitFor(t, "Get to block", func() bool {
		q.mu.Lock()
		defer q.mu.Unlock()
		return q.blockedGets == 1
	})
	return got
}

func TestCapPassesOverClusterAtCap(t *testing.T) {
	q, _ := newGatedQueue(t, Options{MaxInFlightPerCluster: 2})
	for _, name := range []string{"0", "1", "2", "3"} {
		q.Add(req("a", name))
	}
	mustGet(t, q)
	a1 := mustGet(t, q)
	if q.Len() != 0 {
		t.Fatalf("Len() = %d with cluster a at its cap, want 0", q.Len())
	}

	// Get waits while a is at its cap; another cluster goes on.
	got := getAsync(t, q)
	q.Add(req("b", "0"))
	if item := <-got; item != req("b", "0") {
		t.Fatalf("Get() = %v, want b/0: a is at its cap", item)
	}
	q.Done(req("b", "0"))

	// One of a's requests Done frees one place, not two.
	q.Done(a1)
	if item := mustGet(t, q); item != req("a", "2") {
		t.Fatalf("Get() = %v, want a/2", item)
	}
	if q.Len() != 0 {
		t.Fatalf("Len() = %d, want 0: a is at its cap again", q.Len())
	}
}

func TestCapKeepsPrioritiesAndOrder(t *testing.T) {
	q, _ := newGatedQueue(t, Options{MaxInFlightPerCluster: 1})
	for _, name := range []string{"0", "1", "2"} {
		q.Add(req("a", name))
	}
	a0 := mustGet(t, q)
	// A held-back request can still be raised; it keeps being held back.
	q.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(5)}, req("a", "2"))
	q.Add(req("b", "0"))
	if item := mustGet(t, q); item != req("b", "0") {
		t.Fatalf("Get() = %v, want b/0", item)
	}
	q.Done(req("b", "0"))
	q.Done(a0)

	var order []string
	for range 2 {
		item, priority, _ := q.GetWithPriority()
		order = append(order, fmt.Sprintf("%s@%d", item.Name, priority))
		q.Done(item)
	}
	if got := strings.Join(order, " "); got != "2@5 1@0" {
		t.Fatalf("order after the cap freed = %s, want 2@5 1@0", got)
	}
	assertNoGateState(t, q)
}

func TestBreakerOpensProbesAndCloses(t *testing.T) {
	logs := &providertest.LogBuffer{}
	q, clk := newGatedQueue(t, Options{
		Breaker: &BreakerOptions{FailureThreshold: 3, InitialBackoff: time.Second, MaxBackoff: 10 * time.Second},
		Logger:  logs.Logger(),
	})
	x, y := req("a", "x"), req("a", "y")
	q.Add(x)
	fail(t, q, x)
	fail(t, q, x)
	if q.Len() != 1 {
		t.Fatalf("Len() = %d after two failures, want 1: the threshold is three", q.Len())
	}
	fail(t, q, x)

	// Open: a's requests are held back, other clusters are served.
	if q.Len() != 0 {
		t.Fatalf("Len() = %d with a's breaker open, want 0", q.Len())
	}
	if s := stateOf(t, "a"); s != metrics.BreakerOpen {
		t.Fatalf("breaker state of a = %q, want open", s)
	}
	if _, err := logs.Find(`"cluster"="a"`, "circuit breaker opened", `"failures"=3`, `"backoff"="1s"`); err != nil {
		t.Fatalf("the opening was not logged with the cluster:\n%s", strings.Join(logs.Lines(), "\n"))
	}
	q.Add(req("b", "0"))
	succeed(t, q, req("b", "0"))

	clk.Step(time.Second - time.Nanosecond)
	if q.Len() != 0 {
		t.Fatalf("Len() = %d before the backoff passed, want 0", q.Len())
	}
	clk.Step(time.Nanosecond)
	testcheck.WaitFor(t, "the breaker to turn half open", func() bool { return q.Len() == 1 })
	if s := stateOf(t, "a"); s != metrics.BreakerHalfOpen {
		t.Fatalf("breaker state of a = %q, want half open", s)
	}

	// Half open: one probe at a time.
	q.Add(y)
	if got := mustGet(t, q); got != x {
		t.Fatalf("probe = %v, want %v", got, x)
	}
	if q.Len() != 0 {
		t.Fatalf("Len() = %d while the probe runs, want 0", q.Len())
	}
	// The failed probe opens the breaker again, for twice as long.
	q.AddRateLimited(x)
	q.Done(x)
	if s := stateOf(t, "a"); s != metrics.BreakerOpen {
		t.Fatalf("breaker state of a after a failed probe = %q, want open", s)
	}
	if _, err := logs.Find(`"cluster"="a"`, "circuit breaker opened", `"backoff"="2s"`); err != nil {
		t.Fatalf("the second opening was not logged with a 2s backoff:\n%s", strings.Join(logs.Lines(), "\n"))
	}
	clk.Step(time.Second)
	if q.Len() != 0 {
		t.Fatalf("Len() = %d one second into the two-second backoff, want 0", q.Len())
	}
	clk.Step(time.Second)
	testcheck.WaitFor(t, "the breaker to turn half open again", func() bool { return q.Len() == 2 })

	// A successful probe closes it: every request of a is served again, in order.
	succeed(t, q, y)
	if s := stateOf(t, "a"); s != metrics.BreakerClosed {
		t.Fatalf("breaker state of a after a successful probe = %q, want closed", s)
	}
	if q.Len() != 1 {
		t.Fatalf("Len() = %d after the breaker closed, want 1", q.Len())
	}
	succeed(t, q, x)
	for state, want := range map[string]float64{metrics.BreakerOpen: 2, metrics.BreakerHalfOpen: 2, metrics.BreakerClosed: 1} {
		if n := transitions(t, "a", state); n != want {
			t.Errorf("transitions of a to %s = %v, want %v", state, n, want)
		}
	}
	if _, err := logs.Find(`"cluster"="a"`, "circuit breaker closed"); err != nil {
		t.Fatalf("the closing was not logged:\n%s", strings.Join(logs.Lines(), "\n"))
	}
	assertNoGateState(t, q)
}

func TestBreakerCountsFailuresInARow(t *testing.T) {
	q, _ := newGatedQueue(t, Options{Breaker: &BreakerOptions{FailureThreshold: 3}})
	x := req("a", "x")
	q.Add(x)
	fail(t, q, x)
	fail(t, q, x)
	succeed(t, q, x)
	q.Add(x)
	fail(t, q, x)
	fail(t, q, x)
	if q.Len() != 1 {
		t.Fatalf("Len() = %d, want 1: a success in between resets the count", q.Len())
	}
	fail(t, q, x)
	if q.Len() != 0 {
		t.Fatalf("Len() = %d, want 0: three failures in a row open the breaker", q.Len())
	}
}

func TestBreakerIgnoresRequestsHandedOutBeforeItOpened(t *testing.T) {
	q, clk := newGatedQueue(t, Options{Breaker: &BreakerOptions{FailureThreshold: 1, InitialBackoff: time.Second}})
	x, y, w, z := req("a", "x"), req("a", "y"), req("a", "w"), req("a", "z")
	for _, item := range []reconcile.Request{x, y, w} {
		q.Add(item)
		mustGet(t, q)
	}
	q.AddRateLimited(x)
	q.Done(x) // opens
	q.Add(z)
	// A success of a request handed out before the breaker opened does not close it.
	q.Forget(w)
	q.Done(w)
	if s := stateOf(t, "a"); s != metrics.BreakerOpen {
		t.Fatalf("breaker state = %q, want open", s)
	}
	if q.Len() != 0 {
		t.Fatalf("Len() = %d, want 0 while open", q.Len())
	}

	clk.Step(time.Second)
	testcheck.WaitFor(t, "the probe to be ready", func() bool { return q.Len() == 2 })
	if probe := mustGet(t, q); probe != x {
		t.Fatalf("probe = %v, want %v", probe, x)
	}
	// Nor does one ending while the probe runs: the probe decides.
	q.Forget(y)
	q.Done(y)
	if q.Len() != 0 {
		t.Fatalf("Len() = %d while the probe runs, want 0", q.Len())
	}
	if s := stateOf(t, "a"); s != metrics.BreakerHalfOpen {
		t.Fatalf("breaker state = %q, want half open", s)
	}
	q.AddRateLimited(x)
	q.Done(x)
	if s := stateOf(t, "a"); s != metrics.BreakerOpen {
		t.Fatalf("breaker state after the failed probe = %q, want open", s)
	}
}

func TestBreakerAndCapTogether(t *testing.T) {
	q, clk := newGatedQueue(t, Options{MaxInFlightPerCluster: 1, Breaker: &BreakerOptions{FailureThreshold: 1, InitialBackoff: time.Second}})
	x, y, z := req("a", "x"), req("a", "y"), req("a", "z")
	q.Add(x)
	q.Add(y)
	fail(t, q, x)
	q.Add(z)
	clk.Step(time.Second)
	testcheck.WaitFor(t, "the breaker to turn half open", func() bool { return q.Len() == 3 })
	// The probe takes the cluster's only place; when it succeeds the cap still holds one at a
	// time.
	succeed(t, q, y)
	mustGet(t, q)
	if q.Len() != 0 {
		t.Fatalf("Len() = %d, want 0: the cap holds after the breaker closed", q.Len())
	}
}

func TestShutDownWithDrainDropsRequestsHeldByBreaker(t *testing.T) {
	q, _ := newGatedQueue(t, Options{MaxInFlightPerCluster: 1, Breaker: &BreakerOptions{FailureThreshold: 1, InitialBackoff: time.Hour}})
	broken := req("broken", "x")
	q.Add(broken)
	fail(t, q, broken) // open for an hour, broken/x held back

	capped0, capped1 := req("capped", "0"), req("capped", "1")
	q.Add(capped0)
	q.Add(capped1)
	mustGet(t, q) // capped/1 is held back by the cap

	drained := make(chan struct{})
	go func() {
		q.ShutDownWithDrain()
		close(drained)
	}()
	testcheck.WaitFor(t, "ShutDownWithDrain to start", q.ShuttingDown)
	// The request held back by the cap is drained once a place frees up; the one held back by
	// the breaker is not waited for.
	got := getAsync(t, q)
	q.Done(capped0)
	if item := <-got; item != capped1 {
		t.Fatalf("Get() while draining = %v, want %v", item, capped1)
	}
	select {
	case <-drained:
		t.Fatal("ShutDownWithDrain returned while capped/1 is being processed")
	default:
	}
	q.Done(capped1)
	<-drained
	if _, shutdown := q.Get(); !shutdown {
		t.Fatal("Get handed out a request after the drain")
	}
	assertNoGateState(t, q, "broken")
}

func TestClusterLenAndBreakerState(t *testing.T) {
	q, _ := newGatedQueue(t, Options{MaxInFlightPerCluster: 1, Breaker: &BreakerOptions{FailureThreshold: 1, InitialBackoff: time.Hour}})
	var stats interface {
		ClusterLen(multicluster.ClusterName) int
		ClusterBreakerState(multicluster.ClusterName) string
	} = q
	for _, item := range []reconcile.Request{req("a", "0"), req("a", "1"), req("b", "0"), req("b", "1"), req("b", "2")} {
		q.Add(item)
	}
	q.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(3)}, req("b", "3"))
	q.AddAfter(req("b", "later"), time.Hour)
	succeed(t, q, req("b", "3"))
	fail(t, q, req("a", "0")) // a's breaker opens; a/0 and a/1 are held back
	mustGet(t, q)             // b/0; b/1 and b/2 are held back by the cap

	for cluster, want := range map[multicluster.ClusterName]struct {
		len   int
		state string
	}{"a": {2, metrics.BreakerOpen}, "b": {2, metrics.BreakerClosed}, "c": {0, metrics.BreakerClosed}} {
		if n := stats.ClusterLen(cluster); n != want.len {
			t.Errorf("ClusterLen(%s) = %d, want %d", cluster, n, want.len)
		}
		if s := stats.ClusterBreakerState(cluster); s != want.state {
			t.Errorf("ClusterBreakerState(%s) = %q, want %q", cluster, s, want.state)
		}
	}
	plain, _ := newTestQueue(t, Options{})
	if s := plain.ClusterBreakerState("a"); s != "" {
		t.Errorf("ClusterBreakerState without a breaker = %q, want empty", s)
	}
}

func TestBreakerOffRecordsNothing(t *testing.T) {
	q, _ := newGatedQueue(t, Options{})
	x := req("a", "x")
	q.Add(x)
	for range 20 {
		fail(t, q, x)
	}
	if q.Len() != 1 {
		t.Fatalf("Len() = %d, want 1: without a breaker nothing is held back", q.Len())
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.gates != nil {
		t.Fatalf("a queue without caps and breaker keeps cluster gates: %v", q.gates)
	}
}

func TestBreakerOptionsDefaults(t *testing.T) {
	got := Options{Breaker: &BreakerOptions{}, MaxInFlightPerCluster: -3}.withDefaults("c")
	want := BreakerOptions{FailureThreshold: 10, InitialBackoff: 5 * time.Second, MaxBackoff: 5 * time.Minute}
	if *got.Breaker != want {
		t.Fatalf("defaulted breaker = %+v, want %+v", *got.Breaker, want)
	}
	if got.MaxInFlightPerCluster != 0 {
		t.Fatalf("MaxInFlightPerCluster = %d, want 0 for a negative value", got.MaxInFlightPerCluster)
	}
	if got := (BreakerOptions{InitialBackoff: time.Hour}).withDefaults(); got.MaxBackoff != time.Hour {
		t.Fatalf("MaxBackoff = %v, want it raised to InitialBackoff", got.MaxBackoff)
	}
}

// assertNoGateState fails if the queue keeps cluster state beyond the clusters named.
func assertNoGateState(t *testing.T, q *clusterFair[reconcile.Request], except ...string) {
	t.Helper()
	q.mu.Lock()
	defer q.mu.Unlock()
	for name := range q.gates {
		if !contains(except, string(name)) {
			t.Errorf("the queue keeps a gate for cluster %q: %+v", name, *q.gates[name])
		}
	}
	for name := range q.ready.held {
		if !contains(except, string(name)) {
			t.Errorf("the queue holds cluster %q back", name)
		}
	}
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}
