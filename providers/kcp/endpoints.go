package kcp

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kcpcache "github.com/kcp-dev/apimachinery/v2/pkg/cache"
	"github.com/kcp-dev/logicalcluster/v3"
	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"

	"mcr.dev/core/kubeconfig"
	"mcr.dev/core/providers/kit"
)

// endpoint is one virtual workspace URL of the slice (one shard): a wildcard cache on
// <url>/clusters/* shared by every logical cluster served there.
type endpoint struct {
	url string
	log logr.Logger
	// problem is touched by the endpoint's sync only, and once the engine has stopped.
	problem kit.Problem

	// mu guards what follows. Logical clusters engage through the endpoint holding it for
	// reading, so that stopping, which takes it for writing, waits for engagements in flight.
	mu        sync.RWMutex
	config    *rest.Config // the provider's config with the endpoint's URL as host
	cache     *wildcardCache
	informer  toolscache.SharedIndexInformer // of Options.ObjectToWatch
	stopCache func()
	stopping  bool
}

// running reports whether the endpoint's cache has synced and the endpoint is not stopping.
func (ep *endpoint) running() bool {
	ep.mu.RLock()
	defer ep.mu.RUnlock()
	return ep.cache != nil && !ep.stopping
}

// stop stops the endpoint's cache, if it runs, and reports whether it did.
func (ep *endpoint) stop() bool {
	ep.mu.Lock()
	ep.stopping = true
	stopCache := ep.stopCache
	ep.stopCache = nil
	ep.mu.Unlock()
	if stopCache == nil {
		return false
	}
	stopCache()
	return true
}

// syncEndpoint starts the endpoint url while the slice lists it, and stops it when the slice no
// longer does or is gone. An endpoint that cannot be watched is reported and retried.
func (p *Provider) syncEndpoint(ctx context.Context, url string) kit.Result {
	slice := &apisv1alpha1.APIExportEndpointSlice{}
	listed := false
	switch err := p.host.GetCache().Get(ctx, client.ObjectKey{Name: p.sliceName}, slice); {
	case apierrors.IsNotFound(err):
		slice = nil
	case err != nil:
		p.log.Error(err, "Reading the APIExportEndpointSlice from the host cache", "slice", p.sliceName)
		return kit.Result{Retry: true}
	default:
		listed = slices.Contains(EndpointURLs(slice), url)
	}

	p.mu.Lock()
	ep := p.endpoints[url]
	if ep == nil && listed {
		ep = &endpoint{url: url, log: p.log.WithValues("endpoint", kit.RedactText(url))}
		p.endpoints[url] = ep
	}
	p.mu.Unlock()
	switch {
	case !listed:
		if ep != nil {
			p.stopEndpoint(ctx, ep)
		}
		return kit.Result{}
	case ep.running():
		return kit.Result{}
	}
	if err := kubeconfig.CheckServerURL("an endpoint URL of the slice", url); err != nil {
		// Refused until the slice lists another URL: a URL with credentials must never reach
		// client-go, and the error quotes none of it.
		p.endpointProblems.Report(&ep.problem, ep.log, slice, nil, ReasonEndpointUnavailable, reasonInvalidEndpointURL,
			fmt.Errorf("an endpoint URL of the slice is refused: %w", err))
		return kit.Result{}
	}

	if err := p.startEndpoint(ctx, ep); err != nil {
		if ctx.Err() != nil {
			return kit.Result{}
		}
		p.endpointProblems.Report(&ep.problem, ep.log, slice, nil, ReasonEndpointUnavailable, ReasonEndpointUnavailable,
			fmt.Errorf("endpoint %s: %w", kit.RedactText(url), err))
		return kit.Result{Retry: true}
	}
	recovered := ep.problem.Broken()
	p.endpointProblems.Resolve(&ep.problem, ep.log)
	ep.log.Info("Watching endpoint")
	if recovered {
		p.engine.Events().Record(slice, nil, corev1.EventTypeNormal, ReasonEndpointReady, "Endpoint "+kit.RedactText(url)+" is watched again")
	}
	// The syncs of logical clusters queued before the endpoint ran did not see it.
	for _, name := range ep.logicalClusters() {
		p.engine.Add(key{LogicalCluster: name})
	}
	return kit.Result{}
}

// startEndpoint starts the endpoint's wildcard cache and waits, at most
// Options.CacheSyncTimeout, until its informer of the watched type has synced; then the
// endpoint runs.
func (p *Provider) startEndpoint(ctx context.Context, ep *endpoint) error {
	cfg, err := p.opts.RESTConfig(p.config)
	if err != nil {
		return err
	}
	cfg.Host = ep.url
	wc, err := newWildcardCache(cfg, p.opts.Scheme)
	if err != nil {
		return err
	}
	// The cache lives until the endpoint stops, not as long as this sync.
	cacheCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := wc.Start(cacheCtx); err != nil && cacheCtx.Err() == nil {
			ep.log.Error(err, "The wildcard cache of the endpoint stopped")
		}
	}()
	var removeHandler func()
	stop := func() {
		if removeHandler != nil {
			removeHandler()
		}
		cancel()
		<-done
		wc.httpClient.CloseIdleConnections()
	}

	syncCtx, cancelSync := context.WithTimeout(ctx, p.opts.CacheSyncTimeout)
	defer cancelSync()
	kind := fmt.Sprintf("%T", p.opts.ObjectToWatch)
	informer, err := wc.sharedInformer(syncCtx, p.opts.ObjectToWatch, cache.BlockUntilSynced(false))
	if err != nil {
		stop()
		return fmt.Errorf("watching %s through /clusters/*: %w", kind, err)
	}
	queue := p.queueLogicalCluster(ep)
	reg, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    queue,
		UpdateFunc: func(_, obj any) { queue(obj) },
		DeleteFunc: queue,
	})
	if err != nil {
		stop()
		return fmt.Errorf("watching %s through /clusters/*: %w", kind, err)
	}
	removeHandler = func() { _ = informer.RemoveEventHandler(reg) }
	if !kit.WaitFor(syncCtx, reg.HasSynced) {
		stop()
		return fmt.Errorf("%s through /clusters/* did not sync within %s (is the endpoint reachable, and may the provider list and watch there?)", kind, p.opts.CacheSyncTimeout)
	}
	ep.mu.Lock()
	ep.config, ep.cache, ep.informer, ep.stopCache = cfg, wc, informer, stop
	ep.mu.Unlock()
	return nil
}

// queueLogicalCluster returns the event handler that queues the logical cluster of an object of
// the watched type.
func (p *Provider) queueLogicalCluster(ep *endpoint) func(obj any) {
	return func(obj any) {
		o, ok := kit.ObjectOf(obj)
		if !ok {
			return
		}
		name := logicalcluster.From(o)
		if !name.IsValid() {
			Errors.WithLabelValues(reasonInvalidObject).Inc()
			ep.log.Error(nil, "Ignoring an object without a valid kcp.io/cluster annotation", "object", o.GetName(), "annotation", name.String())
			return
		}
		p.engine.Add(key{LogicalCluster: name})
	}
}

// stopEndpoint stops an endpoint the slice no longer lists: no logical cluster engages through
// it any more, those engaged through it are disengaged (or engaged through another endpoint that
// serves them), and only then its cache stops, so that no controller reads from a stopped cache.
func (p *Provider) stopEndpoint(ctx context.Context, ep *endpoint) {
	ep.mu.Lock()
	ep.stopping = true
	ep.mu.Unlock()
	for _, name := range p.engagedThrough(ep) {
		p.engine.Add(key{LogicalCluster: name})
	}
	// Each of their syncs disengages them. When ctx ends instead, the provider stops: the
	// engine disengages every logical cluster, then stopAllEndpoints stops the cache.
	if !kit.WaitFor(ctx, func() bool { return len(p.engagedThrough(ep)) == 0 }) {
		return
	}
	p.mu.Lock()
	if p.endpoints[ep.url] == ep {
		delete(p.endpoints, ep.url)
	}
	p.mu.Unlock()
	if ep.stop() {
		ep.log.Info("Stopped watching endpoint")
	}
	p.endpointProblems.Drop(&ep.problem)
}

// objects returns the objects of the watched type of a logical cluster on the endpoint.
func (ep *endpoint) objects(name logicalcluster.Name) ([]client.Object, error) {
	ep.mu.RLock()
	informer := ep.informer
	ep.mu.RUnlock()
	if informer == nil {
		return nil, nil
	}
	items, err := informer.GetIndexer().ByIndex(kcpcache.ClusterIndexName, kcpcache.ClusterIndexKey(name))
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

// logicalClusters returns the logical clusters that have objects of the watched type on the
// endpoint.
func (ep *endpoint) logicalClusters() []logicalcluster.Name {
	ep.mu.RLock()
	informer := ep.informer
	ep.mu.RUnlock()
	if informer == nil {
		return nil
	}
	var names []logicalcluster.Name
	for _, v := range informer.GetIndexer().ListIndexFuncValues(kcpcache.ClusterIndexName) {
		if name := logicalcluster.Name(v); name.IsValid() {
			names = append(names, name)
		}
	}
	return names
}
