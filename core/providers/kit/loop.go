// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kit

import (
	"context"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/util/workqueue"
)

// loopOptions configures a loop; the Engine passes its defaulted Options.
type loopOptions[K comparable] struct {
	// Name names the queue in the workqueue metrics, e.g. "clusterapi-provider".
	//
	// Defaults to none: the queue is not instrumented.
	Name string

	// Sync brings the state of one key in line with the host. The loop never runs two syncs of
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
func (o loopOptions[K]) withDefaults() loopOptions[K] {
	d := Options{RetryMinDelay: o.RetryMinDelay, RetryMaxDelay: o.RetryMaxDelay, ResyncPeriod: o.ResyncPeriod, Logger: logr.Discard()}
	d.SetDefaults("")
	o.RetryMinDelay, o.RetryMaxDelay, o.ResyncPeriod = d.RetryMinDelay, d.RetryMaxDelay, d.ResyncPeriod
	return o
}

// loop syncs keys from a rate-limited queue. Keys may be added from the moment New returns, for
// example by the event handlers WatchHost registers before Run starts.
type loop[K comparable] struct {
	opts  loopOptions[K]
	queue workqueue.TypedRateLimitingInterface[K]
}

// newLoop returns a loop with an empty queue. Call Run to process it, or ShutDown to drop it.
func newLoop[K comparable](opts loopOptions[K]) *loop[K] {
	o := opts.withDefaults()
	return &loop[K]{
		opts: o,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[K](o.RetryMinDelay, o.RetryMaxDelay),
			workqueue.TypedRateLimitingQueueConfig[K]{Name: o.Name}),
	}
}

// Add queues key for a sync. A key queued again while it waits is synced once; a key queued
// while it is being synced is synced again afterwards. After ShutDown, Add does nothing.
func (l *loop[K]) Add(key K) { l.queue.Add(key) }

// AddRateLimited queues key after its next backoff delay: for a member that stopped on its own.
func (l *loop[K]) AddRateLimited(key K) { l.queue.AddRateLimited(key) }

// AddAfter queues key once d has passed, without touching its backoff: for a sync that must
// happen at a known time (credentials that expire) whatever the sync of now returns.
func (l *loop[K]) AddAfter(key K, d time.Duration) { l.queue.AddAfter(key, d) }

// ShutDown stops the queue: Run returns once the running syncs have. It is safe to call more
// than once and before Run.
func (l *loop[K]) ShutDown() { l.queue.ShutDown() }

// Run syncs queued keys and resyncs Options.Keys until ctx ends or ShutDown is called; then it
// waits for the running syncs to return and returns.
func (l *loop[K]) Run(ctx context.Context) {
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
func (l *loop[K]) resync(ctx context.Context) {
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
