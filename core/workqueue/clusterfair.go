// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package workqueue

import (
	"container/heap"
	"sync"
	"time"

	"github.com/go-logr/logr"
	kworkqueue "k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"mcr.dev/core/metrics"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/reconcile"
)

// Options configure a cluster-fair queue.
type Options struct {
	// MetricsProvider receives the standard workqueue metrics (depth, adds, latency, work
	// duration, unfinished work, longest running processor, retries), named after the queue.
	// A queue with an empty name records none.
	//
	// Defaults to controller-runtime's own series in its metrics registry (workqueue_depth,
	// workqueue_adds_total, ... with the labels name and controller set to the queue's name), as
	// controller-runtime's queues report them.
	MetricsProvider kworkqueue.MetricsProvider

	// MaxInFlightPerCluster caps the requests of one cluster being processed at once: a cluster
	// at its cap is passed over by Get, and its requests wait, until one of its requests is Done;
	// other clusters go on. It keeps a cluster with slow reconciles from occupying every worker.
	//
	// Defaults to 0: no cap.
	MaxInFlightPerCluster int

	// Breaker, when set, turns on a circuit breaker per cluster: a cluster whose reconciles fail
	// FailureThreshold times in a row is parked, its requests held back, for a backoff; then one
	// of its requests goes through as a probe, whose success serves the cluster again and whose
	// failure parks it for twice as long. The queue learns outcomes from what the controller does
	// with a request it processes (see the package documentation). Zero fields take their
	// documented defaults.
	//
	// Defaults to nil: no breaker.
	Breaker *BreakerOptions

	// Logger logs the breaker's transitions, with the cluster under the key "cluster".
	//
	// Defaults to controller-runtime's logger (sigs.k8s.io/controller-runtime/pkg/log.Log) named
	// "workqueue", with the queue's name under the key "controller".
	Logger logr.Logger
}

// withDefaults returns the options with every unset field defaulted, for the queue named name.
func (o Options) withDefaults(name string) Options {
	if o.MetricsProvider == nil {
		o.MetricsProvider = defaultMetricsProvider
	}
	o.MaxInFlightPerCluster = max(o.MaxInFlightPerCluster, 0)
	if o.Breaker != nil {
		b := o.Breaker.withDefaults()
		o.Breaker = &b
	}
	if o.Logger.GetSink() == nil {
		o.Logger = ctrllog.Log.WithName("workqueue").WithValues("controller", name)
	}
	return o
}

// ClusterFairQueue returns a function for controller-runtime's TypedOptions.NewQueue that builds
// a cluster-fair queue (see NewClusterFair) named after the controller, using the rate limiter
// the controller passes: its RateLimiter option, defaulted by controller-runtime.
func ClusterFairQueue[request reconcile.ClusterAware[request]](opts Options) func(controllerName string, rateLimiter kworkqueue.TypedRateLimiter[request]) kworkqueue.TypedRateLimitingInterface[request] {
	return func(controllerName string, rateLimiter kworkqueue.TypedRateLimiter[request]) kworkqueue.TypedRateLimitingInterface[request] {
		return NewClusterFair(controllerName, rateLimiter, opts)
	}
}

// NewClusterFair returns a priority queue that serves clusters in turn: higher priorities first,
// then one request per cluster per turn, then first in, first out within a cluster.
//
// name names the queue's metrics. rateLimiter decides the delay of AddRateLimited and the answers
// of NumRequeues and Forget; nil means per-item exponential back-off from 5ms to 1000s, as in
// controller-runtime's priority queue.
//
// The queue runs one goroutine, for delayed requests, breakers and metrics; ShutDown ends it.
func NewClusterFair[request reconcile.ClusterAware[request]](name string, rateLimiter kworkqueue.TypedRateLimiter[request], opts Options) priorityqueue.PriorityQueue[request] {
	return newClusterFair(name, rateLimiter, opts, clock.RealClock{})
}

// clusterFair implements NewClusterFair.
type clusterFair[request reconcile.ClusterAware[request]] struct {
	// name names the queue's metrics; empty records none.
	name        string
	rateLimiter kworkqueue.TypedRateLimiter[request]
	clock       clock.WithTicker
	log         logr.Logger
	maxInFlight int
	breaker     *BreakerOptions

	mu sync.Mutex
	// readyCond wakes Get callers; drainedCond wakes ShutDownWithDrain. Separate conditions keep
	// a Signal for a new request from landing on the drain waiter.
	readyCond   *sync.Cond
	drainedCond *sync.Cond

	// items holds every queued request (waiting, ready or parked).
	items map[request]*entry[request]
	// processing holds requests handed out and not yet Done.
	processing map[request]inFlight
	ready      readyOrder[request]
	waiting    waitingHeap[request]
	parked     int
	seq        uint64
	metrics    *queueMetrics[request]

	// gates holds the account of each cluster when caps or the breaker are on; nil otherwise.
	gates map[multicluster.ClusterName]*clusterGate
	// reopening holds the open breakers, by the time they turn half open.
	reopening reopeningHeap
	// events holds breaker transitions to log once the lock is released.
	events []breakerEvent

	// timer fires when the earliest waiting request is due; armedFor is that time, zero when
	// the timer is stopped.
	timer    clock.Timer
	armedFor time.Time

	// blockedGets counts callers waiting in Get, for tests.
	blockedGets int

	shuttingDown bool
	draining     bool

	stopOnce   sync.Once
	stop       chan struct{}
	loopExited chan struct{}
}

func newClusterFair[request reconcile.ClusterAware[request]](name string, rateLimiter kworkqueue.TypedRateLimiter[request], opts Options, clk clock.WithTicker) *clusterFair[request] {
	if rateLimiter == nil {
		rateLimiter = kworkqueue.NewTypedItemExponentialFailureRateLimiter[request](5*time.Millisecond, 1000*time.Second)
	}
	opts = opts.withDefaults(name)
	q := &clusterFair[request]{
		name:        name,
		rateLimiter: rateLimiter,
		clock:       clk,
		log:         opts.Logger,
		maxInFlight: opts.MaxInFlightPerCluster,
		breaker:     opts.Breaker,
		items:       map[request]*entry[request]{},
		processing:  map[request]inFlight{},
		ready:       newReadyOrder[request](),
		metrics:     newQueueMetrics[request](opts.MetricsProvider, name, clk),
		timer:       clk.NewTimer(time.Hour),
		stop:        make(chan struct{}),
		loopExited:  make(chan struct{}),
	}
	if q.maxInFlight > 0 || q.breaker != nil {
		q.gates = map[multicluster.ClusterName]*clusterGate{}
	}
	q.timer.Stop()
	q.readyCond = sync.NewCond(&q.mu)
	q.drainedCond = sync.NewCond(&q.mu)

	// The ticker exists before the goroutine starts, so a test stepping a fake clock right
	// after construction cannot miss it.
	var ticker clock.Ticker
	if q.metrics != nil {
		ticker = clk.NewTicker(unfinishedWorkPeriod)
	}
	go q.loop(ticker)
	return q
}

// Add queues item, or leaves it where it is if it is queued already.
func (q *clusterFair[request]) Add(item request) {
	q.AddWithOpts(priorityqueue.AddOpts{}, item)
}

// AddAfter queues item once duration has passed. If item is queued already, the earlier ready
// time wins.
func (q *clusterFair[request]) AddAfter(item request, duration time.Duration) {
	q.AddWithOpts(priorityqueue.AddOpts{After: duration}, item)
}

// AddRateLimited queues item after the delay its rate limiter gives.
func (q *clusterFair[request]) AddRateLimited(item request) {
	q.AddWithOpts(priorityqueue.AddOpts{RateLimited: true}, item)
}

// AddWithOpts queues items with a priority (default 0; higher is served first) and an optional
// delay: After, the rate limiter's delay when RateLimited, or the shorter of both. An item that is
// queued already keeps its place unless it gains a higher priority, which moves it to the end of
// its cluster's requests at that priority; its ready time becomes the earlier of both.
func (q *clusterFair[request]) AddWithOpts(o priorityqueue.AddOpts, items ...request) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shuttingDown {
		return
	}

	priority := ptr.Deref(o.Priority, 0)
	var now time.Time
	for _, item := range items {
		after := o.After
		if o.RateLimited {
			if limited := q.rateLimiter.When(item); after <= 0 || limited < after {
				after = limited
			}
		}
		var readyAt time.Time
		if after > 0 {
			if now.IsZero() {
				now = q.clock.Now()
			}
			readyAt = now.Add(after)
			q.metrics.retry()
		}
		if o.RateLimited && q.breaker != nil {
			// A rate-limited add of a request being processed is how the controller retries a
			// failed reconcile: the breaker counts it at Done.
			if f, busy := q.processing[item]; busy {
				f.failed = true
				q.processing[item] = f
			}
		}
		q.lockedAdd(item, priority, readyAt)
	}
}

// lockedAdd queues item or merges it into its entry. A zero readyAt means now.
func (q *clusterFair[request]) lockedAdd(item request, priority int, readyAt time.Time) {
	e, queued := q.items[item]
	if !queued {
		e = &entry[request]{key: item, cluster: item.Cluster(), priority: priority, heapIndex: -1}
		q.items[item] = e
		if q.lockedGated() {
			q.lockedGate(e.cluster).queued++
		}
		if readyAt.IsZero() {
			q.lockedMakeDue(e)
		} else {
			q.lockedWait(e, readyAt)
		}
		return
	}

	raised := priority > e.priority
	switch e.state {
	case stateReady:
		if raised {
			q.ready.remove(e)
			e.priority = priority
			q.ready.push(e)
		}
	case stateParked:
		e.priority = max(e.priority, priority)
	case stateWaiting:
		e.priority = max(e.priority, priority)
		switch {
		case readyAt.IsZero():
			heap.Remove(&q.waiting, e.heapIndex)
			q.lockedMakeDue(e)
		case readyAt.Before(e.readyAt):
			e.readyAt = readyAt
			heap.Fix(&q.waiting, e.heapIndex)
			q.lockedArmIfEarlier(readyAt)
		}
	}
}

// lockedWait puts e in the waiting heap.
func (q *clusterFair[request]) lockedWait(e *entry[request], readyAt time.Time) {
	e.state = stateWaiting
	e.readyAt = readyAt
	e.seq = q.seq
	q.seq++
	heap.Push(&q.waiting, e)
	q.lockedArmIfEarlier(readyAt)
}

// lockedMakeDue makes e ready, or parks it while its request is being processed.
func (q *clusterFair[request]) lockedMakeDue(e *entry[request]) {
	e.readyAt = time.Time{}
	if q.name != "" {
		e.dueAt = q.clock.Now()
	}
	q.metrics.add(e.key)
	if _, busy := q.processing[e.key]; busy {
		e.state = stateParked
		q.parked++
		return
	}
	e.state = stateReady
	q.ready.push(e)
	q.readyCond.Signal()
}

// lockedArmIfEarlier re-arms the timer if readyAt comes before the time it is armed for.
func (q *clusterFair[request]) lockedArmIfEarlier(readyAt time.Time) {
	if q.armedFor.IsZero() || readyAt.Before(q.armedFor) {
		q.lockedPromoteDue()
	}
}

// lockedPromoteDue makes every due waiting request ready, turns open breakers whose backoff has
// passed half open, and arms the timer for the next of either. All happens under the lock, so
// once a promoted request is visible the timer is already set for the next: tests stepping a
// fake clock see no gap.
func (q *clusterFair[request]) lockedPromoteDue() {
	// A pending tick is consumed here: this call does the work it asks for. Without this, a fake
	// clock's buffered timer channel could hold a stale tick past a Reset.
	select {
	case <-q.timer.C():
	default:
	}
	now := q.clock.Now()
	for len(q.waiting) > 0 && !q.waiting[0].readyAt.After(now) {
		q.lockedMakeDue(heap.Pop(&q.waiting).(*entry[request]))
	}
	q.lockedPromoteReopening(now)

	var next time.Time
	if len(q.waiting) > 0 {
		next = q.waiting[0].readyAt
	}
	if len(q.reopening) > 0 && (next.IsZero() || q.reopening[0].reopenAt.Before(next)) {
		next = q.reopening[0].reopenAt
	}
	if next.IsZero() {
		q.timer.Stop()
		q.armedFor = time.Time{}
		return
	}
	q.armedFor = next
	q.timer.Reset(next.Sub(now))
}

// loop is the queue's only goroutine: it promotes delayed requests when the timer fires and
// refreshes the unfinished-work metrics.
func (q *clusterFair[request]) loop(ticker clock.Ticker) {
	defer close(q.loopExited)

	var ticks <-chan time.Time
	if ticker != nil {
		defer ticker.Stop()
		ticks = ticker.C()
	}
	for {
		select {
		case <-q.stop:
			return
		case <-q.timer.C():
			q.mu.Lock()
			if !q.shuttingDown {
				q.lockedPromoteDue()
			}
			events := q.lockedTakeEvents()
			q.mu.Unlock()
			q.logEvents(events)
		case <-ticks:
			q.mu.Lock()
			if !q.shuttingDown {
				q.metrics.updateUnfinishedWork()
			}
			q.mu.Unlock()
		}
	}
}

// Get blocks until a request is ready or the queue shuts down. The caller must call Done with the
// request when it has finished processing it.
func (q *clusterFair[request]) Get() (item request, shutdown bool) {
	item, _, shutdown = q.GetWithPriority()
	return item, shutdown
}

// GetWithPriority is Get that also returns the priority the request was queued with.
func (q *clusterFair[request]) GetWithPriority() (item request, priority int, shutdown bool) {
	q.mu.Lock()
	for {
		if q.shuttingDown {
			// While draining, requests already due are still handed out, including parked ones
			// that become ready at Done and those held back by their cluster's cap, which is
			// freed at Done.
			if !q.draining || (q.ready.len() == 0 && q.parked == 0 && q.ready.heldLen() == 0) {
				q.mu.Unlock()
				var zero request
				return zero, 0, true
			}
		}
		if q.ready.len() > 0 {
			break
		}
		q.blockedGets++
		q.readyCond.Wait()
		q.blockedGets--
	}

	e := q.ready.pop()
	delete(q.items, e.key)
	q.processing[e.key] = q.lockedHandedOut(e.cluster)
	q.metrics.get(e.key)
	var waited time.Duration
	if q.name != "" {
		waited = q.clock.Since(e.dueAt)
	}
	q.mu.Unlock()

	if q.name != "" {
		metrics.ObserveQueueWait(q.name, e.cluster, waited)
	}
	return e.key, e.priority, false
}

// Done marks item as processed. If it was added while being processed, it is queued again now.
func (q *clusterFair[request]) Done(item request) {
	q.mu.Lock()
	events := q.lockedDone(item)
	q.mu.Unlock()
	q.logEvents(events)
}

func (q *clusterFair[request]) lockedDone(item request) []breakerEvent {
	f, ok := q.processing[item]
	if !ok {
		return nil
	}
	delete(q.processing, item)
	q.metrics.done(item)

	if e, ok := q.items[item]; ok && e.state == stateParked {
		q.parked--
		if q.shuttingDown && q.lockedGated() && q.gates[e.cluster].breakerBlocks() {
			// Held back by an open breaker, which no longer reopens: dropped, as at ShutDown.
			q.lockedDrop(e)
		} else {
			e.state = stateReady
			q.ready.push(e)
			q.readyCond.Signal()
		}
	}
	q.lockedFinished(item.Cluster(), f)
	if q.draining {
		// Get callers may be waiting only for parked requests; let them re-check.
		q.readyCond.Broadcast()
		q.drainedCond.Broadcast()
	}
	return q.lockedTakeEvents()
}

// Forget tells the rate limiter to forget item's failures.
func (q *clusterFair[request]) Forget(item request) {
	q.rateLimiter.Forget(item)
}

// NumRequeues returns the rate limiter's count of item's failures.
func (q *clusterFair[request]) NumRequeues(item request) int {
	return q.rateLimiter.NumRequeues(item)
}

// Len returns the number of requests ready to be handed out. Delayed requests, requests added
// while being processed and requests held back by their cluster's cap or breaker are not counted
// until they can be handed out.
func (q *clusterFair[request]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.ready.len()
}

// ShutDown stops the queue: adds are ignored, delayed requests are dropped, and Get returns at
// once with shutdown set, even with requests queued, so workers stop promptly (as with
// controller-runtime's priority queue). It returns when the queue's goroutine has ended.
func (q *clusterFair[request]) ShutDown() {
	q.mu.Lock()
	q.lockedShutDown()
	q.draining = false
	q.readyCond.Broadcast()
	q.drainedCond.Broadcast()
	q.mu.Unlock()
	q.stopLoop()
}

// ShutDownWithDrain is ShutDown except that Get keeps handing out the requests already ready (and
// those parked behind their own processing), and it returns only when all of them and all
// requests being processed are Done. Workers must keep calling Get and Done, or it blocks; a
// concurrent ShutDown ends the wait.
func (q *clusterFair[request]) ShutDownWithDrain() {
	q.mu.Lock()
	if !q.shuttingDown {
		q.lockedShutDown()
		q.draining = true
		q.readyCond.Broadcast()
	}
	for q.draining && (q.ready.len() > 0 || len(q.processing) > 0) {
		q.drainedCond.Wait()
	}
	q.draining = false
	q.readyCond.Broadcast()
	q.mu.Unlock()
	q.stopLoop()
}

// lockedShutDown rejects further adds and drops delayed requests and the requests held back by
// an open breaker: a queue that shuts down does not wait for breakers.
func (q *clusterFair[request]) lockedShutDown() {
	q.shuttingDown = true
	for _, e := range q.waiting {
		q.lockedDrop(e)
	}
	q.waiting = nil
	for _, g := range q.gates {
		if g.breakerBlocks() {
			for _, e := range q.ready.removeCluster(g.name) {
				q.lockedDrop(e)
			}
		}
	}
	q.reopening = nil
	q.timer.Stop()
	q.armedFor = time.Time{}
}

// lockedDrop forgets a queued entry that will not be handed out.
func (q *clusterFair[request]) lockedDrop(e *entry[request]) {
	delete(q.items, e.key)
	if q.lockedGated() {
		g := q.gates[e.cluster]
		g.queued--
		q.lockedDropGateIfIdle(g)
	}
}

func (q *clusterFair[request]) stopLoop() {
	q.stopOnce.Do(func() { close(q.stop) })
	<-q.loopExited
}

// ShuttingDown reports whether ShutDown or ShutDownWithDrain was called.
func (q *clusterFair[request]) ShuttingDown() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.shuttingDown
}
