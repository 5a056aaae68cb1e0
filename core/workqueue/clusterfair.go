package workqueue

import (
	"cmp"
	"container/heap"
	"sync"
	"time"

	kworkqueue "k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"

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
// The queue runs one goroutine, for delayed requests and metrics; ShutDown ends it.
func NewClusterFair[request reconcile.ClusterAware[request]](name string, rateLimiter kworkqueue.TypedRateLimiter[request], opts Options) priorityqueue.PriorityQueue[request] {
	return newClusterFair(name, rateLimiter, opts, clock.RealClock{})
}

// clusterFair implements NewClusterFair.
type clusterFair[request reconcile.ClusterAware[request]] struct {
	rateLimiter kworkqueue.TypedRateLimiter[request]
	clock       clock.WithTicker

	mu sync.Mutex
	// readyCond wakes Get callers; drainedCond wakes ShutDownWithDrain. Separate conditions keep
	// a Signal for a new request from landing on the drain waiter.
	readyCond   *sync.Cond
	drainedCond *sync.Cond

	// items holds every queued request (waiting, ready or parked).
	items map[request]*entry[request]
	// processing holds requests handed out and not yet Done.
	processing map[request]struct{}
	ready      readyOrder[request]
	waiting    waitingHeap[request]
	parked     int
	seq        uint64
	metrics    *queueMetrics[request]

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
	q := &clusterFair[request]{
		rateLimiter: rateLimiter,
		clock:       clk,
		items:       map[request]*entry[request]{},
		processing:  map[request]struct{}{},
		ready:       newReadyOrder[request](),
		metrics:     newQueueMetrics[request](cmp.Or(opts.MetricsProvider, defaultMetricsProvider), name, clk),
		timer:       clk.NewTimer(time.Hour),
		stop:        make(chan struct{}),
		loopExited:  make(chan struct{}),
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
		q.lockedAdd(item, priority, readyAt)
	}
}

// lockedAdd queues item or merges it into its entry. A zero readyAt means now.
func (q *clusterFair[request]) lockedAdd(item request, priority int, readyAt time.Time) {
	e, queued := q.items[item]
	if !queued {
		e = &entry[request]{key: item, cluster: item.Cluster(), priority: priority, heapIndex: -1}
		q.items[item] = e
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

// lockedPromoteDue makes every due waiting request ready and arms the timer for the next one.
// Both happen under the lock, so once a promoted request is visible the timer is already set for
// the next: tests stepping a fake clock see no gap.
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
	if len(q.waiting) == 0 {
		q.timer.Stop()
		q.armedFor = time.Time{}
		return
	}
	q.armedFor = q.waiting[0].readyAt
	q.timer.Reset(q.armedFor.Sub(now))
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
			q.mu.Unlock()
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
	defer q.mu.Unlock()
	for {
		if q.shuttingDown {
			// While draining, requests already due are still handed out, including parked ones
			// that become ready at Done.
			if !q.draining || (q.ready.len() == 0 && q.parked == 0) {
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
	q.processing[e.key] = struct{}{}
	q.metrics.get(e.key)
	return e.key, e.priority, false
}

// Done marks item as processed. If it was added while being processed, it is queued again now.
func (q *clusterFair[request]) Done(item request) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.processing[item]; !ok {
		return
	}
	delete(q.processing, item)
	q.metrics.done(item)

	if e, ok := q.items[item]; ok && e.state == stateParked {
		q.parked--
		e.state = stateReady
		q.ready.push(e)
		q.readyCond.Signal()
	}
	if q.draining {
		// Get callers may be waiting only for parked requests; let them re-check.
		q.readyCond.Broadcast()
		q.drainedCond.Broadcast()
	}
}

// Forget tells the rate limiter to forget item's failures.
func (q *clusterFair[request]) Forget(item request) {
	q.rateLimiter.Forget(item)
}

// NumRequeues returns the rate limiter's count of item's failures.
func (q *clusterFair[request]) NumRequeues(item request) int {
	return q.rateLimiter.NumRequeues(item)
}

// Len returns the number of requests ready to be handed out. Delayed requests and requests added
// while being processed are not counted until they are ready.
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

// lockedShutDown rejects further adds and drops delayed requests.
func (q *clusterFair[request]) lockedShutDown() {
	q.shuttingDown = true
	for _, e := range q.waiting {
		delete(q.items, e.key)
	}
	q.waiting = nil
	q.timer.Stop()
	q.armedFor = time.Time{}
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
