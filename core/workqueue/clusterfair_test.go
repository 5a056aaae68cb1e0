// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package workqueue

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	kworkqueue "k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	ctrlreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"mcr.dev/core/internal/testcheck"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/reconcile"
)

func req(cluster, name string) reconcile.Request {
	return reconcile.Request{
		Request:     ctrlreconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}},
		ClusterName: multicluster.ClusterName(cluster),
	}
}

// newTestQueue returns a queue on a fake clock, shut down when the test ends.
func newTestQueue(t testing.TB, opts Options) (*clusterFair[reconcile.Request], *clocktesting.FakeClock) {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	q := newClusterFair[reconcile.Request]("test", nil, opts, clk)
	t.Cleanup(q.ShutDown)
	return q, clk
}

// mustGet gets a request and fails the test on shutdown.
func mustGet(t *testing.T, q priorityqueue.PriorityQueue[reconcile.Request]) reconcile.Request {
	t.Helper()
	item, shutdown := q.Get()
	if shutdown {
		t.Fatal("Get reported shutdown")
	}
	return item
}

// getN gets n requests, marking each Done, and returns them in order.
func getN(t *testing.T, q priorityqueue.PriorityQueue[reconcile.Request], n int) []reconcile.Request {
	t.Helper()
	got := make([]reconcile.Request, 0, n)
	for range n {
		item := mustGet(t, q)
		q.Done(item)
		got = append(got, item)
	}
	return got
}

func names(reqs []reconcile.Request) string {
	s := make([]string, len(reqs))
	for i, r := range reqs {
		s[i] = string(r.ClusterName) + "/" + r.Name
	}
	return strings.Join(s, " ")
}

func TestQueueIsAPriorityQueue(t *testing.T) {
	newQueue := ClusterFairQueue[reconcile.Request](Options{})
	q := newQueue("controller", nil)
	defer q.ShutDown()
	if _, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); !ok {
		t.Fatalf("%T does not implement priorityqueue.PriorityQueue; controller-runtime would drop priorities", q)
	}
}

func TestLateClusterServedWithinTwoGets(t *testing.T) {
	q, _ := newTestQueue(t, Options{})
	for i := range 1000 {
		q.Add(req("a", fmt.Sprint(i)))
	}
	b := req("b", "0")
	q.Add(b)

	got := getN(t, q, 2)
	if got[0] != b && got[1] != b {
		t.Fatalf("first two Gets = %s; want cluster b's request among them", names(got))
	}
	if q.Len() != 999 {
		t.Fatalf("Len() = %d, want 999", q.Len())
	}
}

func TestClustersInterleave(t *testing.T) {
	q, _ := newTestQueue(t, Options{})
	for _, cluster := range []string{"a", "b", "c"} {
		for i := range 3 {
			q.Add(req(cluster, fmt.Sprint(i)))
		}
	}

	got := names(getN(t, q, 9))
	want := "a/0 b/0 c/0 a/1 b/1 c/1 a/2 b/2 c/2"
	if got != want {
		t.Fatalf("order = %s\nwant    %s", got, want)
	}
}

func TestNewClusterJoinsEndOfRound(t *testing.T) {
	q, _ := newTestQueue(t, Options{})
	for _, cluster := range []string{"a", "b", "c"} {
		for i := range 2 {
			q.Add(req(cluster, fmt.Sprint(i)))
		}
	}
	first := getN(t, q, 1) // a/0; b is next
	q.Add(req("d", "0"))   // waits for one turn of b, c and a

	got := names(append(first, getN(t, q, 6)...))
	want := "a/0 b/0 c/0 a/1 d/0 b/1 c/1"
	if got != want {
		t.Fatalf("order = %s\nwant    %s", got, want)
	}
}

func TestPriorityBeatsFairness(t *testing.T) {
	q, _ := newTestQueue(t, Options{})
	for i := range 3 {
		q.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(-100)}, req("a", fmt.Sprint(i)))
	}
	for i := range 2 {
		q.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(10)}, req("b", fmt.Sprint(i)))
	}
	q.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(10)}, req("c", "0"))
	q.Add(req("c", "1"))

	var got []string
	for range 7 {
		item, priority, shutdown := q.GetWithPriority()
		if shutdown {
			t.Fatal("GetWithPriority reported shutdown")
		}
		q.Done(item)
		got = append(got, fmt.Sprintf("%s/%s@%d", item.ClusterName, item.Name, priority))
	}
	want := "b/0@10 c/0@10 b/1@10 c/1@0 a/0@-100 a/1@-100 a/2@-100"
	if strings.Join(got, " ") != want {
		t.Fatalf("order = %s\nwant    %s", strings.Join(got, " "), want)
	}
}

func TestDeduplicatesQueuedRequests(t *testing.T) {
	q, _ := newTestQueue(t, Options{})
	x := req("a", "x")
	q.Add(x)
	q.Add(x)
	q.AddWithOpts(priorityqueue.AddOpts{}, x, x)
	if q.Len() != 1 {
		t.Fatalf("Len() = %d after adding one request four times, want 1", q.Len())
	}
	if got := mustGet(t, q); got != x {
		t.Fatalf("Get() = %v, want %v", got, x)
	}
	if q.Len() != 0 {
		t.Fatalf("Len() = %d after Get, want 0", q.Len())
	}
}

func TestRaisingPriorityMovesQueuedRequest(t *testing.T) {
	q, _ := newTestQueue(t, Options{})
	a0, a1, a2 := req("a", "0"), req("a", "1"), req("a", "2")
	q.Add(a0)
	q.Add(a1)
	q.Add(a2)
	q.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(5)}, a2)
	q.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(-5)}, a1) // lower: ignored

	item, priority, _ := q.GetWithPriority()
	if item != a2 || priority != 5 {
		t.Fatalf("GetWithPriority() = %v@%d, want %v@5", item, priority, a2)
	}
	q.Done(item)
	if got := names(getN(t, q, 2)); got != "a/0 a/1" {
		t.Fatalf("rest = %s, want a/0 a/1", got)
	}
	if q.Len() != 0 {
		t.Fatalf("Len() = %d, want 0", q.Len())
	}
}

func TestRequestAddedWhileProcessingWaitsForDone(t *testing.T) {
	q, _ := newTestQueue(t, Options{})
	x, y := req("a", "x"), req("b", "y")
	q.Add(x)
	if got := mustGet(t, q); got != x {
		t.Fatalf("Get() = %v, want %v", got, x)
	}

	q.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(3)}, x)
	q.Add(x)
	if q.Len() != 0 {
		t.Fatalf("Len() = %d with x parked behind its own processing, want 0", q.Len())
	}
	q.Add(y)
	if got := mustGet(t, q); got != y {
		t.Fatalf("Get() = %v while x is processing, want %v", got, y)
	}
	q.Done(y)

	q.Done(x)
	if q.Len() != 1 {
		t.Fatalf("Len() = %d after Done(x), want 1 (x queued again once)", q.Len())
	}
	item, priority, _ := q.GetWithPriority()
	if item != x || priority != 3 {
		t.Fatalf("GetWithPriority() = %v@%d, want %v@3", item, priority, x)
	}
	q.Done(x)
	if q.Len() != 0 {
		t.Fatalf("Len() = %d, want 0", q.Len())
	}
}

func TestDoneOfUnknownRequestIsHarmless(t *testing.T) {
	q, _ := newTestQueue(t, Options{})
	x := req("a", "x")
	q.Add(x)
	q.Done(x) // queued, not processing: must not disturb the queue
	if q.Len() != 1 {
		t.Fatalf("Len() = %d, want 1", q.Len())
	}
	if got := mustGet(t, q); got != x {
		t.Fatalf("Get() = %v, want %v", got, x)
	}
}

func TestAddAfterOrdersByReadyTime(t *testing.T) {
	q, clk := newTestQueue(t, Options{})
	a, b, c := req("a", "a"), req("b", "b"), req("c", "c")
	q.AddAfter(a, 3*time.Second)
	q.AddAfter(b, time.Second)
	q.AddAfter(c, 2*time.Second)
	if q.Len() != 0 {
		t.Fatalf("Len() = %d before any delay passed, want 0", q.Len())
	}

	for _, want := range []reconcile.Request{b, c, a} {
		clk.Step(time.Second)
		if got := mustGet(t, q); got != want {
			t.Fatalf("Get() = %v, want %v", got, want)
		}
		q.Done(want)
		if q.Len() != 0 {
			t.Fatalf("Len() = %d after taking %v, want 0: a later request became ready early", q.Len(), want)
		}
	}
}

func TestAddAfterMergesWithQueuedRequest(t *testing.T) {
	q, clk := newTestQueue(t, Options{})
	x, y, z := req("a", "x"), req("a", "y"), req("a", "z")

	// A ready request stays ready.
	q.Add(x)
	q.AddAfter(x, time.Hour)
	if q.Len() != 1 {
		t.Fatalf("Len() = %d, want 1: AddAfter must not delay a ready request", q.Len())
	}

	// A shorter delay wins.
	q.AddAfter(y, time.Hour)
	q.AddAfter(y, time.Second)

	// An immediate add makes a delayed request ready at once.
	q.AddAfter(z, time.Hour)
	q.Add(z)
	if q.Len() != 2 {
		t.Fatalf("Len() = %d, want 2 (x and z)", q.Len())
	}
	if got := names(getN(t, q, 2)); got != "a/x a/z" {
		t.Fatalf("ready = %s, want a/x a/z", got)
	}

	clk.Step(time.Second)
	if got := mustGet(t, q); got != y {
		t.Fatalf("Get() = %v, want %v", got, y)
	}
	q.Done(y)
	clk.Step(2 * time.Hour)
	if q.Len() != 0 {
		t.Fatalf("Len() = %d, want 0: merged delays must not leave duplicates", q.Len())
	}
}

func TestDelayedRequestDueWhileProcessingIsParked(t *testing.T) {
	q, clk := newTestQueue(t, Options{})
	x := req("a", "x")
	q.Add(x)
	mustGet(t, q)
	q.AddAfter(x, time.Second)
	clk.Step(time.Second)
	if q.Len() != 0 {
		t.Fatalf("Len() = %d, want 0: x is still being processed", q.Len())
	}
	q.Done(x)
	if got := mustGet(t, q); got != x {
		t.Fatalf("Get() = %v, want %v", got, x)
	}
}

func TestAddRateLimitedUsesRateLimiter(t *testing.T) {
	q, clk := newTestQueue(t, Options{})
	x := req("a", "x")

	q.AddRateLimited(x) // default limiter: 5ms
	if n := q.NumRequeues(x); n != 1 {
		t.Fatalf("NumRequeues() = %d, want 1", n)
	}
	if q.Len() != 0 {
		t.Fatalf("Len() = %d, want 0 before the back-off passed", q.Len())
	}
	clk.Step(5 * time.Millisecond)
	mustGet(t, q)
	q.Done(x)

	q.AddRateLimited(x) // 10ms
	clk.Step(5 * time.Millisecond)
	if q.Len() != 0 {
		t.Fatalf("Len() = %d, want 0: second back-off is 10ms", q.Len())
	}
	clk.Step(5 * time.Millisecond)
	mustGet(t, q)
	q.Done(x)

	// After also given: the shorter delay wins.
	q.AddWithOpts(priorityqueue.AddOpts{RateLimited: true, After: time.Millisecond}, x)
	clk.Step(time.Millisecond)
	mustGet(t, q)
	q.Done(x)

	q.Forget(x)
	if n := q.NumRequeues(x); n != 0 {
		t.Fatalf("NumRequeues() = %d after Forget, want 0", n)
	}
}

func TestControllerRateLimiterIsUsed(t *testing.T) {
	limiter := kworkqueue.NewTypedItemFastSlowRateLimiter[reconcile.Request](time.Hour, time.Hour, 1)
	q := ClusterFairQueue[reconcile.Request](Options{})("c", limiter)
	defer q.ShutDown()
	x := req("a", "x")
	q.AddRateLimited(x)
	if n := limiter.NumRequeues(x); n != 1 {
		t.Fatalf("limiter.NumRequeues() = %d, want 1: the queue must use the controller's limiter", n)
	}
	if q.Len() != 0 {
		t.Fatalf("Len() = %d, want 0 during the limiter's one-hour delay", q.Len())
	}
}

func TestShutDownUnblocksGet(t *testing.T) {
	q, _ := newTestQueue(t, Options{})
	const getters = 3
	results := make(chan bool, getters)
	for range getters {
		go func() {
			_, shutdown := q.Get()
			results <- shutdown
		}()
	}
	testcheck.WaitFor(t, "Get callers to block", func() bool {
		q.mu.Lock()
		defer q.mu.Unlock()
		return q.blockedGets == getters
	})

	q.ShutDown()
	for range getters {
		if shutdown := <-results; !shutdown {
			t.Fatal("Get returned without shutdown after ShutDown")
		}
	}
	if !q.ShuttingDown() {
		t.Fatal("ShuttingDown() = false after ShutDown")
	}
}

func TestShutDownStopsHandingOut(t *testing.T) {
	q, _ := newTestQueue(t, Options{})
	q.Add(req("a", "x"))
	q.ShutDown()
	if _, shutdown := q.Get(); !shutdown {
		t.Fatal("Get handed out a request after ShutDown")
	}
	q.Add(req("a", "y"))
	if q.Len() != 1 {
		t.Fatalf("Len() = %d, want 1: adds after ShutDown are ignored", q.Len())
	}
}

func TestShutDownWithDrainWaitsForProcessing(t *testing.T) {
	q, clk := newTestQueue(t, Options{})
	x, y, late := req("a", "x"), req("b", "y"), req("c", "late")
	q.Add(x)
	mustGet(t, q)
	q.Add(x) // parked
	q.Add(y)
	q.AddAfter(late, time.Second)

	drained := make(chan struct{})
	go func() {
		q.ShutDownWithDrain()
		close(drained)
	}()
	testcheck.WaitFor(t, "ShutDownWithDrain to start", q.ShuttingDown)
	q.Add(req("d", "rejected"))

	// y is still handed out while draining.
	if got := mustGet(t, q); got != y {
		t.Fatalf("Get() = %v while draining, want %v", got, y)
	}
	q.Done(y)
	select {
	case <-drained:
		t.Fatal("ShutDownWithDrain returned while x is processing")
	default:
	}
	// x was parked: Done queues it, and it is handed out too.
	q.Done(x)
	if got := mustGet(t, q); got != x {
		t.Fatalf("Get() = %v while draining, want parked %v", got, x)
	}
	clk.Step(time.Second) // delayed requests were dropped
	q.Done(x)
	<-drained

	if item, shutdown := q.Get(); !shutdown {
		t.Fatalf("Get() = %v after drain, want shutdown", item)
	}
}

func TestShutDownEndsDrain(t *testing.T) {
	q, _ := newTestQueue(t, Options{})
	q.Add(req("a", "x"))
	mustGet(t, q) // never Done
	drained := make(chan struct{})
	go func() {
		q.ShutDownWithDrain()
		close(drained)
	}()
	testcheck.WaitFor(t, "ShutDownWithDrain to start", q.ShuttingDown)
	q.ShutDown()
	<-drained
}

func TestNoGoroutineSurvivesShutDown(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"default metrics", Options{}},
		{"metrics", Options{MetricsProvider: newFakeMetricsProvider()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Only goroutines this test started count: queues of other tests (a controller
			// shuts its queue down asynchronously) must not disturb the check.
			self := goroutineID()
			q := NewClusterFair[reconcile.Request]("leak-check", nil, tc.opts)
			q.AddAfter(req("a", "x"), time.Hour)
			q.Add(req("b", "y"))
			mustGet(t, q)
			if n := queueGoroutines(self); n != 1 {
				t.Fatalf("%d queue goroutines while running, want 1", n)
			}
			q.ShutDown()
			// ShutDown returns once the goroutine has finished its work; it may take a moment
			// longer to vanish from the runtime's list.
			testcheck.WaitFor(t, "the queue goroutine to exit", func() bool { return queueGoroutines(self) == 0 })
		})
	}
}

// queueGoroutines counts live goroutines started by this package from goroutine creator,
// whether or not they have been scheduled yet.
func queueGoroutines(creator string) int {
	n := 0
	for _, g := range strings.Split(allStacks(), "\n\n") {
		if strings.Contains(g, "created by mcr.dev/core/workqueue.") && strings.Contains(g, " in goroutine "+creator+"\n") {
			n++
		}
	}
	return n
}

// goroutineID returns the calling goroutine's number as the runtime prints it in stacks.
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	id, _, _ := strings.Cut(strings.TrimPrefix(string(buf), "goroutine "), " ")
	return id
}

func allStacks() string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}

func TestClusterBookkeepingReleased(t *testing.T) {
	q, clk := newTestQueue(t, Options{})
	q.Add(req("a", "0"))
	q.Add(req("a", "1"))
	q.Add(req("b", "0"))
	q.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(7)}, req("c", "0"))
	q.AddAfter(req("d", "0"), time.Second)

	clustersAt := func(priority int) []multicluster.ClusterName {
		q.mu.Lock()
		defer q.mu.Unlock()
		lvl := q.ready.levels[priority]
		if lvl == nil {
			return nil
		}
		var names []multicluster.ClusterName
		for name := range lvl.clusters {
			names = append(names, name)
		}
		return names
	}

	getN(t, q, 3) // c/0, a/0, b/0
	if got := clustersAt(7); got != nil {
		t.Fatalf("priority 7 still has clusters %v after its only request was taken", got)
	}
	if got := clustersAt(0); len(got) != 1 || got[0] != "a" {
		t.Fatalf("priority 0 clusters = %v, want [a]: b's sub-queue must go when it empties", got)
	}

	clk.Step(time.Second)
	getN(t, q, 2) // a/1, d/0

	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.ready.levels) != 0 || len(q.ready.priorities) != 0 || q.ready.count != 0 {
		t.Fatalf("ready order keeps state after draining: levels=%d priorities=%v count=%d",
			len(q.ready.levels), q.ready.priorities, q.ready.count)
	}
	if len(q.items) != 0 || len(q.processing) != 0 || len(q.waiting) != 0 || q.parked != 0 {
		t.Fatalf("queue keeps state after draining: items=%d processing=%d waiting=%d parked=%d",
			len(q.items), len(q.processing), len(q.waiting), q.parked)
	}
}

func TestConcurrentProducersAndConsumers(t *testing.T) {
	q := NewClusterFair[reconcile.Request]("", nil, Options{})
	defer q.ShutDown()

	const (
		producers  = 4
		clusters   = 5
		perCluster = 200
	)
	var (
		mu        sync.Mutex
		inFlight  = map[reconcile.Request]bool{}
		processed = map[reconcile.Request]int{}
		errs      []string
	)

	var consumers sync.WaitGroup
	for range 4 {
		consumers.Go(func() {
			for {
				item, shutdown := q.Get()
				if shutdown {
					return
				}
				mu.Lock()
				if inFlight[item] {
					errs = append(errs, fmt.Sprintf("%v handed out twice concurrently", item))
				}
				inFlight[item] = true
				processed[item]++
				requeue := processed[item] == 1 && item.Name[len(item.Name)-1] == '7'
				mu.Unlock()

				if requeue {
					q.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(1)}, item)
				}
				mu.Lock()
				inFlight[item] = false
				mu.Unlock()
				q.Done(item)
			}
		})
	}

	var producing sync.WaitGroup
	for p := range producers {
		producing.Go(func() {
			// Every producer adds every request, in different ways, so adds overlap.
			for i := range perCluster {
				for c := range clusters {
					r := req(fmt.Sprint("c", c), fmt.Sprint(i))
					switch (i + p) % 3 {
					case 0:
						q.Add(r)
					case 1:
						q.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(i % 5)}, r)
					default:
						q.AddAfter(r, time.Millisecond)
					}
				}
			}
		})
	}
	producing.Wait()

	want := clusters * perCluster
	testcheck.WaitFor(t, "every request to be processed", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(processed) == want && q.Len() == 0
	})
	q.ShutDown()
	consumers.Wait()

	mu.Lock()
	defer mu.Unlock()
	if len(errs) > 0 {
		t.Fatal(strings.Join(errs, "\n"))
	}
}
