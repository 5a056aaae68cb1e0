package kcp

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kcpcache "github.com/kcp-dev/apimachinery/v2/pkg/cache"
	"github.com/kcp-dev/logicalcluster/v3"
	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"

	"mcr.dev/core/multicluster"
)

// endpoint is one virtual workspace URL of the slice (one shard): a wildcard cache on
// <url>/clusters/* shared by every logical cluster served there, and a queue of the logical
// clusters whose objects changed.
type endpoint struct {
	p     *Provider
	url   string
	slice *apisv1alpha1.APIExportEndpointSlice // the slice that listed the URL, for Events
	log   logr.Logger

	ctx    context.Context // ends when the endpoint is stopped or the provider stops
	cancel context.CancelFunc
	done   chan struct{} // closed when run has returned
	queue  workqueue.TypedRateLimitingInterface[logicalcluster.Name]

	// Set by run before any sync, once the wildcard informer of the watched type has synced.
	cache    *wildcardCache
	informer toolscache.SharedIndexInformer

	mu      sync.Mutex
	engaged map[multicluster.ClusterName]struct{} // logical clusters this endpoint engaged
	broken  bool                                  // counted in BrokenEndpoints
	problem string                                // the last reported problem
}

func newEndpoint(ctx context.Context, p *Provider, url string, slice *apisv1alpha1.APIExportEndpointSlice) *endpoint {
	ctx, cancel := context.WithCancel(ctx)
	return &endpoint{
		p:      p,
		url:    url,
		slice:  slice,
		log:    p.log.WithValues("endpoint", url),
		ctx:    ctx,
		cancel: cancel,
		done:   make(chan struct{}),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[logicalcluster.Name](p.opts.RetryMinDelay, p.opts.RetryMaxDelay),
			workqueue.TypedRateLimitingQueueConfig[logicalcluster.Name]{Name: "kcp-provider"}),
		engaged: map[multicluster.ClusterName]struct{}{},
	}
}

// enqueue asks the endpoint to look at a logical cluster again.
func (e *endpoint) enqueue(name multicluster.ClusterName) {
	e.queue.Add(logicalcluster.Name(name))
}

// stop disengages the endpoint's logical clusters, stops its cache and returns once all of it
// has stopped.
func (e *endpoint) stop() {
	e.cancel()
	<-e.done
}

// run watches the endpoint until its context ends: it starts the wildcard cache, retrying with
// backoff while the endpoint cannot be watched, and then syncs logical clusters as their
// objects change. On its way out it disengages every logical cluster it engaged and stops the
// cache.
func (e *endpoint) run() {
	defer close(e.done)
	defer e.queue.ShutDown()
	defer e.resolved()

	delay := e.p.opts.RetryMinDelay
	var stopCache func()
	for {
		stop, err := e.startCache()
		if err == nil {
			stopCache = stop
			break
		}
		if e.ctx.Err() != nil {
			return
		}
		e.failed(err)
		t := time.NewTimer(delay)
		select {
		case <-e.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		delay = min(2*delay, e.p.opts.RetryMaxDelay)
	}
	e.ready()

	// The queue hands out each logical cluster to one goroutine at a time; logical clusters run
	// in parallel, so that one that is slow to engage never holds up the others.
	var running sync.WaitGroup
	context.AfterFunc(e.ctx, e.queue.ShutDown)
	for {
		name, shutdown := e.queue.Get()
		if shutdown {
			break
		}
		running.Go(func() {
			defer e.queue.Done(name)
			if retry := e.sync(name); retry && e.ctx.Err() == nil {
				e.queue.AddRateLimited(name)
				return
			}
			e.queue.Forget(name)
		})
	}
	running.Wait()
	e.disengageAll()
	stopCache()
	e.log.Info("Stopped watching endpoint")
}

// startCache starts the endpoint's wildcard cache and waits, at most Options.CacheSyncTimeout,
// until its informer of the watched type has synced. The returned func stops the cache.
func (e *endpoint) startCache() (stop func(), err error) {
	cfg := rest.CopyConfig(e.p.config)
	cfg.Host = e.url
	wc, err := newWildcardCache(cfg, e.p.opts.Scheme)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := wc.Start(ctx); err != nil && ctx.Err() == nil {
			e.log.Error(err, "The wildcard cache of the endpoint stopped")
		}
	}()
	var removeHandler func()
	stop = func() {
		if removeHandler != nil {
			removeHandler()
		}
		cancel()
		<-done
		wc.httpClient.CloseIdleConnections()
	}

	syncCtx, cancelSync := context.WithTimeout(ctx, e.p.opts.CacheSyncTimeout)
	defer cancelSync()
	kind := fmt.Sprintf("%T", e.p.opts.ObjectToWatch)
	informer, err := wc.sharedInformer(syncCtx, e.p.opts.ObjectToWatch, cache.BlockUntilSynced(false))
	if err != nil {
		stop()
		return nil, fmt.Errorf("watching %s through %s/clusters/*: %w", kind, e.url, err)
	}
	reg, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    e.enqueueObject,
		UpdateFunc: func(_, obj any) { e.enqueueObject(obj) },
		DeleteFunc: e.enqueueObject,
	})
	if err != nil {
		stop()
		return nil, fmt.Errorf("watching %s through %s/clusters/*: %w", kind, e.url, err)
	}
	removeHandler = func() { _ = informer.RemoveEventHandler(reg) }
	if !waitFor(syncCtx, reg.HasSynced) {
		stop()
		return nil, fmt.Errorf("%s through %s/clusters/* did not sync within %s (is the endpoint reachable, and may the provider list and watch there?)", kind, e.url, e.p.opts.CacheSyncTimeout)
	}
	e.cache, e.informer = wc, informer
	return stop, nil
}

// enqueueObject queues the logical cluster of an object of the watched type.
func (e *endpoint) enqueueObject(obj any) {
	o, ok := objectOf(obj)
	if !ok {
		return
	}
	name := logicalcluster.From(o)
	if !name.IsValid() {
		Errors.WithLabelValues(reasonInvalidObject).Inc()
		e.log.Error(nil, "Ignoring an object without a valid kcp.io/cluster annotation", "object", o.GetName(), "annotation", name.String())
		return
	}
	e.queue.Add(name)
}

// objectOf returns the object of an informer notification, unwrapping deletion tombstones.
func objectOf(obj any) (client.Object, bool) {
	if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	o, ok := obj.(client.Object)
	return o, ok
}

// disengageAll disengages every logical cluster the endpoint engaged and waits until each has
// stopped.
func (e *endpoint) disengageAll() {
	e.mu.Lock()
	names := make([]multicluster.ClusterName, 0, len(e.engaged))
	for name := range e.engaged {
		names = append(names, name)
	}
	e.mu.Unlock()
	for _, name := range names {
		e.disengage(name, "the endpoint is no longer served")
		e.p.paths.forget(logicalcluster.Name(name))
	}
}

// failed reports that the endpoint cannot be watched: it counts the attempt and, when the
// problem is new, logs it and records a Warning Event on the slice.
func (e *endpoint) failed(err error) {
	Errors.WithLabelValues(ReasonEndpointUnavailable).Inc()
	e.mu.Lock()
	if !e.broken {
		e.broken = true
		BrokenEndpoints.Inc()
	}
	repeated := e.problem == err.Error()
	e.problem = err.Error()
	e.mu.Unlock()
	if repeated {
		e.log.V(1).Info("Endpoint still cannot be watched", "error", err.Error())
		return
	}
	e.log.Error(err, "Endpoint cannot be watched; retrying with backoff")
	e.p.event(e.slice, corev1.EventTypeWarning, ReasonEndpointUnavailable, "Endpoint "+e.url+": "+err.Error())
}

// ready reports that the endpoint is watched.
func (e *endpoint) ready() {
	hadProblem := e.resolved()
	e.log.Info("Watching endpoint")
	if hadProblem {
		e.p.event(e.slice, corev1.EventTypeNormal, ReasonEndpointReady, "Endpoint "+e.url+" is watched again")
	}
}

// resolved clears the endpoint's problem, if any, and reports whether there was one.
func (e *endpoint) resolved() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.broken {
		e.broken = false
		BrokenEndpoints.Dec()
	}
	had := e.problem != ""
	e.problem = ""
	return had
}

// clusterObjects returns the objects of the watched type of a logical cluster.
func (e *endpoint) clusterObjects(name logicalcluster.Name) ([]client.Object, error) {
	items, err := e.informer.GetIndexer().ByIndex(kcpcache.ClusterIndexName, kcpcache.ClusterIndexKey(name))
	if err != nil {
		return nil, err
	}
	objs := make([]client.Object, 0, len(items))
	for _, item := range items {
		if o, ok := item.(client.Object); ok {
			objs = append(objs, o)
		}
	}
	return objs, nil
}
