package reconcileloop

import (
	"context"
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
)

// Defaults of Options.
const (
	DefaultRetryMinDelay = time.Second
	DefaultRetryMaxDelay = 5 * time.Minute
	DefaultResyncPeriod  = 10 * time.Minute
)

// Result is what a sync asks the Loop to do with its key.
type Result struct {
	// Retry asks for the key to be synced again after the key's next backoff delay.
	Retry bool

	// After, when Retry is false and After is positive, asks for the key to be synced again
	// once After has passed (for example when a grace period ends), and resets its backoff.
	After time.Duration
}

// Options configures a Loop. Defaults are applied by New.
type Options[K comparable] struct {
	// Name names the queue in the workqueue metrics, e.g. "clusterapi-provider".
	//
	// Defaults to none: the queue is not instrumented.
	Name string

	// Sync brings the state of one key in line with the host. The Loop never runs two syncs of
	// the same key at once; syncs of different keys run in parallel without a bound, so that a
	// key that takes long to fail (an unreachable member waits a whole cache sync timeout)
	// never holds up others. ctx ends when Run's context ends.
	//
	// Required.
	Sync func(ctx context.Context, key K) Result

	// Keys returns the keys to sync again every ResyncPeriod without any change: a safety net
	// for changes no event announced.
	//
	// Defaults to nil: no resync.
	Keys func() []K

	// RetryMinDelay and RetryMaxDelay bound the per-key exponential backoff of Result.Retry.
	//
	// Default to DefaultRetryMinDelay (1s) and DefaultRetryMaxDelay (5m); a RetryMaxDelay
	// below RetryMinDelay is raised to it.
	RetryMinDelay time.Duration
	RetryMaxDelay time.Duration

	// ResyncPeriod is how often Keys are queued again.
	//
	// Defaults to DefaultResyncPeriod (10m).
	ResyncPeriod time.Duration
}

// withDefaults is the only place defaults are applied.
func (o Options[K]) withDefaults() Options[K] {
	Durations{RetryMinDelay: &o.RetryMinDelay, RetryMaxDelay: &o.RetryMaxDelay, ResyncPeriod: &o.ResyncPeriod}.SetDefaults()
	return o
}

// Loop syncs keys from a rate-limited queue. Keys may be added from the moment New returns, for
// example by the event handlers WatchHost registers before Run starts.
type Loop[K comparable] struct {
	opts  Options[K]
	queue workqueue.TypedRateLimitingInterface[K]
}

// New returns a Loop with an empty queue. Call Run to process it, or ShutDown to drop it.
func New[K comparable](opts Options[K]) *Loop[K] {
	o := opts.withDefaults()
	return &Loop[K]{
		opts: o,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[K](o.RetryMinDelay, o.RetryMaxDelay),
			workqueue.TypedRateLimitingQueueConfig[K]{Name: o.Name}),
	}
}

// Add queues key for a sync. A key queued again while it waits is synced once; a key queued
// while it is being synced is synced again afterwards. After ShutDown, Add does nothing.
func (l *Loop[K]) Add(key K) { l.queue.Add(key) }

// AddAfter queues key once d has passed, without touching its backoff: for a sync that must
// happen at a known time (credentials that expire) whatever the sync of now returns.
func (l *Loop[K]) AddAfter(key K, d time.Duration) { l.queue.AddAfter(key, d) }

// ShutDown stops the queue: Run returns once the running syncs have. It is safe to call more
// than once and before Run.
func (l *Loop[K]) ShutDown() { l.queue.ShutDown() }

// Run syncs queued keys and resyncs Options.Keys until ctx ends or ShutDown is called; then it
// waits for the running syncs to return and returns.
func (l *Loop[K]) Run(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	context.AfterFunc(ctx, l.queue.ShutDown)

	var running sync.WaitGroup
	defer running.Wait()
	if l.opts.Keys != nil {
		running.Go(func() { l.resync(ctx) })
	}
	for {
		key, shutdown := l.queue.Get()
		if shutdown {
			// ShutDown without ctx ending still ends the resync and the running syncs.
			cancel()
			return
		}
		running.Go(func() {
			defer l.queue.Done(key)
			res := l.opts.Sync(ctx, key)
			switch {
			case ctx.Err() != nil:
				l.queue.Forget(key)
			case res.Retry:
				l.queue.AddRateLimited(key)
			case res.After > 0:
				l.queue.Forget(key)
				l.queue.AddAfter(key, res.After)
			default:
				l.queue.Forget(key)
			}
		})
	}
}

// resync queues Options.Keys every Options.ResyncPeriod until ctx ends.
func (l *Loop[K]) resync(ctx context.Context) {
	tick := time.NewTicker(l.opts.ResyncPeriod)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for _, key := range l.opts.Keys() {
			l.queue.Add(key)
		}
	}
}
