// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kit

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/go-logr/logr"
	toolscache "k8s.io/client-go/tools/cache"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mcsource "mcr.dev/core/source"
)

// Source tells an Engine which keys to sync: the provider's source of truth. The kit has one for
// each kind of source the providers here have: objects on a host cluster (HostObjects), files
// and directories (Files), and anything that must be asked, such as a command-line tool or a
// list of endpoints (Poll). A set of desired members that sources fill and syncs read is Desired.
type Source[K comparable] interface {
	// Start begins to queue keys with e.Add and returns once it has queued every key that
	// exists now, so that the Engine's first syncs see the whole fleet. The returned stop
	// ends the source; the Engine calls it before Run returns. On error nothing of the source
	// may be left running.
	Start(ctx context.Context, e *Engine[K]) (stop func(), err error)
}

// HostObjects watches kinds of objects on a host cluster's informers and queues the keys each
// object maps to.
type HostObjects[K comparable] struct {
	// Informers is the host's cache, e.g. host.GetCache().
	//
	// Defaults to the cache of EngineOptions.Host; the Engine cannot be built without either.
	Informers cache.Informers

	// Watches are the kinds to watch, each with how its objects map to keys.
	Watches []Watch[K]
}

// Watch is one kind of object HostObjects watches.
type Watch[K comparable] struct {
	// Object is an instance of the kind, e.g. &corev1.Secret{}. Its type must be in the host's
	// scheme.
	Object client.Object

	// Kind names the kind in errors.
	//
	// Defaults to the Go type of Object, e.g. "*v1.Secret".
	Kind string

	// Keys maps an object the informer adds, updates or deletes (the object of a deletion
	// tombstone, when the final state is unknown) to the keys to sync. It must not block.
	//
	// Required.
	Keys func(obj client.Object) []K

	// KeysOfOld also queues the keys of the old object of an update, for keys derived from
	// fields that may change (a label naming the object's owner, say).
	//
	// Defaults to false: only the new object.
	KeysOfOld bool

	// InformerHint and SyncHint say, in parentheses after the error, what is probably wrong when
	// the informer cannot be created (a CRD missing, a type missing from the scheme) or does
	// not sync within Options.CacheSyncTimeout (a CRD missing, no list and watch permission).
	//
	// Default to none.
	InformerHint string
	SyncHint     string
}

// Start adds an event handler for each watch to the informers and waits, at most
// Options.CacheSyncTimeout in all, until each has seen every existing object.
func (h HostObjects[K]) Start(ctx context.Context, e *Engine[K]) (stop func(), err error) {
	if h.Informers == nil && e.opts.Host != nil {
		h.Informers = e.opts.Host.GetCache()
	}
	if h.Informers == nil {
		return nil, e.errorf("HostObjects has no Informers")
	}
	timeout := e.opts.Options.CacheSyncTimeout
	waitCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	var stops []func()
	stop = func() {
		for _, s := range stops {
			s()
		}
	}
	for _, w := range h.Watches {
		kind := w.Kind
		if kind == "" {
			kind = fmt.Sprintf("%T", w.Object)
		}
		informer, err := h.Informers.GetInformer(waitCtx, w.Object, cache.BlockUntilSynced(false))
		if err != nil {
			stop()
			return nil, e.errorf("getting the host's informer for %s%s: %w", kind, hint(w.InformerHint), err)
		}
		queue := func(obj any) {
			if o, ok := ObjectOf(obj); ok {
				for _, key := range w.Keys(o) {
					e.Add(key)
				}
			}
		}
		handler := toolscache.ResourceEventHandlerFuncs{
			AddFunc: queue,
			UpdateFunc: func(oldObj, newObj any) {
				if w.KeysOfOld {
					queue(oldObj)
				}
				queue(newObj)
			},
			DeleteFunc: queue,
		}
		var reg toolscache.ResourceEventHandlerRegistration
		if own := e.opts.Host; e.opts.RunHost && own != nil && own.GetCache() == h.Informers {
			// The provider's own host: when it comes back from an outage, its watches are
			// restarted at once instead of on client-go's backoff (up to a minute).
			watchCtx, cancelWatch := context.WithCancel(context.WithoutCancel(ctx))
			reg, err = mcsource.AddRecoverableHandler(watchCtx, own, w.Object, handler)
			if err == nil {
				stops = append(stops, cancelWatch)
			} else {
				cancelWatch()
			}
		} else if reg, err = informer.AddEventHandler(handler); err == nil {
			stops = append(stops, func() { _ = informer.RemoveEventHandler(reg) })
		}
		if err != nil {
			stop()
			return nil, e.errorf("watching the host's %s: %w", kind, err)
		}
		if !toolscache.WaitFor(waitCtx, "", reg.HasSyncedChecker()) {
			stop()
			if ctx.Err() != nil {
				return nil, e.errorf("waiting for the host's %s: %w", kind, context.Cause(ctx))
			}
			return nil, e.errorf("the host's %s did not sync within %s%s", kind, timeout, hint(w.SyncHint))
		}
	}
	return stop, nil
}

// hint formats a hint for an error message.
func hint(h string) string {
	if h == "" {
		return ""
	}
	return " (" + h + ")"
}

// ObjectOf returns the object of an informer notification, unwrapping deletion tombstones; false
// when it is not a client.Object.
func ObjectOf(obj any) (client.Object, bool) {
	if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	o, ok := obj.(client.Object)
	return o, ok
}

// Poll asks a source of truth that cannot be watched (a command-line tool, a remote list) for
// the fleet now and then: List runs once in Start and then every Interval, and queues what it
// found (typically through Desired.Replace).
type Poll[K comparable] struct {
	// List reads the source of truth and queues the keys whose state changed. An error is
	// logged and the next run tries again; List must report problems of single members
	// itself, not fail the whole run for them.
	//
	// Required.
	List func(ctx context.Context) error

	// Interval is the time between two runs of List.
	//
	// Required.
	Interval time.Duration
}

// Start runs List once, then every Interval in the background until ctx ends or stop is called.
// An error of the first run is logged, not returned: the source may come up later.
func (p Poll[K]) Start(ctx context.Context, e *Engine[K]) (stop func(), err error) {
	if p.List == nil || p.Interval <= 0 {
		return nil, e.errorf("Poll needs List and a positive Interval")
	}
	run := func(ctx context.Context) {
		if err := p.List(ctx); err != nil && ctx.Err() == nil {
			e.log.Error(err, "Reading the source of truth; trying again", "retryIn", p.Interval.String())
		}
	}
	run(ctx)
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(p.Interval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				run(ctx)
			}
		}
	})
	return func() { cancel(); wg.Wait() }, nil
}

// Files watches directories on the local file system and calls Scan after every change, once
// the file system has been quiet for Debounce, and every PollInterval whatever happened: a
// polling fallback for changes no event announces (network file systems, event queue overflows,
// an inotify limit reached). Directories are watched, never files: editors replace files by
// renaming a new one over them, and ConfigMap and Secret volumes swap a ..data symlink, both seen
// only as events in the directory.
type Files[K comparable] struct {
	// Scan reads the files, queues the keys whose state changed (typically through
	// Desired.Replace) and returns the directories to watch until the next scan. Scans never
	// overlap.
	//
	// Required.
	Scan func(ctx context.Context) (watch []string)

	// Debounce is how long the file system must be quiet after a change before Scan runs, so
	// that an editor's or kubelet's burst of events causes one scan. A steady stream of events
	// still causes a scan every 10 × Debounce.
	//
	// Defaults to 200ms.
	Debounce time.Duration

	// PollInterval is the time between two scans without any event.
	//
	// Defaults to one minute.
	PollInterval time.Duration
}

// Start scans once and watches what the scan asks for; the scans that follow run in the
// background until ctx ends or stop is called. When the file system cannot be watched at all,
// Start logs why and the source polls only.
func (f Files[K]) Start(ctx context.Context, e *Engine[K]) (stop func(), err error) {
	if f.Scan == nil {
		return nil, e.errorf("Files needs Scan")
	}
	if f.Debounce <= 0 {
		f.Debounce = 200 * time.Millisecond
	}
	if f.PollInterval <= 0 {
		f.PollInterval = time.Minute
	}
	w := newDirWatcher(e)
	scanNow := make(chan struct{}, 1)
	scan := func(ctx context.Context) {
		if w.set(f.Scan(ctx)) {
			// A directory watched for the first time may have changed between the scan and
			// the watch: look once more, now that changes are seen.
			poke(scanNow)
		}
	}
	scan(ctx)

	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer w.close()
		poll := time.NewTicker(f.PollInterval)
		defer poll.Stop()
		d := newDebouncer(f.Debounce)
		defer d.stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-w.events:
				d.poke()
			case <-scanNow:
				d.poke()
			case <-d.timer.C:
				d.armed = false
				scan(ctx)
			case <-poll.C:
				scan(ctx)
			}
		}
	})
	return func() { cancel(); wg.Wait() }, nil
}

func poke(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// dirWatcher turns fsnotify's events for a changing set of directories into scan requests.
type dirWatcher struct {
	fs      *fsnotify.Watcher // nil when the file system cannot be watched: poll only
	log     logr.Logger
	watched map[string]struct{}
	events  chan struct{}
	done    chan struct{}
}

func newDirWatcher[K comparable](e *Engine[K]) *dirWatcher {
	w := &dirWatcher{log: e.log, watched: map[string]struct{}{}, events: make(chan struct{}, 1), done: make(chan struct{})}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		w.log.Error(err, "Cannot watch the file system; changes are noticed at the next poll")
		close(w.done)
		return w
	}
	w.fs = fsw
	go w.forward()
	return w
}

func (w *dirWatcher) forward() {
	defer close(w.done)
	for {
		select {
		case _, ok := <-w.fs.Events:
			if !ok {
				return
			}
		case err, ok := <-w.fs.Errors:
			if !ok {
				return
			}
			// An overflow lost events: scanning again catches up.
			if !errors.Is(err, fsnotify.ErrEventOverflow) {
				w.log.Error(err, "Watching the file system")
			}
		}
		poke(w.events)
	}
}

// set watches exactly dirs and reports whether a directory was added.
func (w *dirWatcher) set(dirs []string) bool {
	if w.fs == nil {
		return false
	}
	want := map[string]struct{}{}
	added := false
	for _, dir := range slices.Sorted(slices.Values(dirs)) {
		want[dir] = struct{}{}
		if _, ok := w.watched[dir]; ok {
			continue
		}
		if err := w.fs.Add(dir); err != nil {
			// Most likely the inotify watch limit, or a directory that vanished meanwhile;
			// the poll still covers it.
			w.log.Error(err, "Cannot watch directory; changes in it are noticed at the next poll", "directory", dir)
			continue
		}
		w.watched[dir] = struct{}{}
		added = true
	}
	for _, dir := range slices.Collect(maps.Keys(w.watched)) {
		if _, ok := want[dir]; !ok {
			// Fails harmlessly when the directory is gone (its watch went with it).
			_ = w.fs.Remove(dir)
			delete(w.watched, dir)
		}
	}
	return added
}

func (w *dirWatcher) close() {
	if w.fs != nil {
		_ = w.fs.Close()
	}
	<-w.done
}

// debouncer fires once the pokes have stopped for quiet, or maxWait after the first poke of a
// burst, whichever is earlier. The receiver of timer.C sets armed to false.
type debouncer struct {
	quiet, maxWait time.Duration
	timer          *time.Timer
	armed          bool
	first          time.Time
}

func newDebouncer(quiet time.Duration) *debouncer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &debouncer{quiet: quiet, maxWait: 10 * quiet, timer: t}
}

func (d *debouncer) poke() {
	now := time.Now()
	if !d.armed {
		d.armed = true
		d.first = now
	}
	d.timer.Reset(max(min(d.quiet, d.first.Add(d.maxWait).Sub(now)), 0))
}

func (d *debouncer) stop() { d.timer.Stop() }

// Desired is the desired state of a set of keys as a source last saw it, for sources that
// read the whole fleet at once (files, a command-line tool, a list of endpoints): Replace tells
// which keys changed, and the sync of a key reads its value with Get. The zero value is empty
// and ready to use; it is safe for concurrent use.
type Desired[K comparable, V any] struct {
	// Equal reports whether two values of a key are the same, so that Replace leaves the key
	// alone.
	//
	// Defaults to nil: every value counts as changed, and every key is queued by each Replace.
	Equal func(a, b V) bool

	mu sync.Mutex
	m  map[K]V
}

// Replace makes all the desired state and returns the keys that appeared, changed (by Equal) or
// went away, in no particular order.
func (d *Desired[K, V]) Replace(all map[K]V) (changed []K) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for k, v := range all {
		old, ok := d.m[k]
		if !ok || d.Equal == nil || !d.Equal(old, v) {
			changed = append(changed, k)
		}
	}
	for k := range d.m {
		if _, ok := all[k]; !ok {
			changed = append(changed, k)
		}
	}
	d.m = maps.Clone(all)
	return changed
}

// Set makes v the desired state of k and reports whether it changed (by Equal).
func (d *Desired[K, V]) Set(k K, v V) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	old, ok := d.m[k]
	if d.m == nil {
		d.m = map[K]V{}
	}
	d.m[k] = v
	return !ok || d.Equal == nil || !d.Equal(old, v)
}

// Delete removes k and reports whether it was there.
func (d *Desired[K, V]) Delete(k K) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.m[k]
	delete(d.m, k)
	return ok
}

// Get returns the desired value of k; false when k is not desired.
func (d *Desired[K, V]) Get(k K) (V, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	v, ok := d.m[k]
	return v, ok
}

// Keys returns every desired key, in no particular order.
func (d *Desired[K, V]) Keys() []K {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Collect(maps.Keys(d.m))
}
