// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kcp

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	toolscache "k8s.io/client-go/tools/cache"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kcp-dev/logicalcluster/v3"

	"mcr.dev/core/kubeconfig"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/redact"

	sharedcache "mcr.dev/providers/kcp/internal/cache"
)

// endpoint is one virtual workspace URL of the endpoint object (one shard): a wildcard cache on
// <url>/clusters/* shared by every logical cluster served there.
type endpoint struct {
	url string
	log logr.Logger
	// problem is touched by the endpoint's sync only, and once the engine has stopped.
	problem kit.Problem

	// mu guards what follows. Logical clusters engage through the endpoint holding it for
	// reading, so that stopping, which takes it for writing, waits for engagements in flight.
	mu        sync.RWMutex
	cache     *sharedcache.Wildcard
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

// syncEndpoint starts the endpoint url while the endpoint object lists it, and stops it when the
// object no longer does or is gone. An endpoint that cannot be watched is reported and retried.
func (p *Provider) syncEndpoint(ctx context.Context, url string) kit.Result {
	object, listed := p.listing(url)
	p.mu.Lock()
	ep := p.endpoints[url]
	if ep == nil && listed {
		ep = &endpoint{url: url, log: p.log.WithValues("endpoint", redact.Text(url))}
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
		return p.checkEndpoint(ctx, ep)
	}
	if err := kubeconfig.CheckServerURL("an endpoint URL of "+p.objectKind, url); err != nil {
		// Refused until the object lists another URL: a URL with credentials must never reach
		// client-go, and the error quotes none of it.
		p.endpointProblems.Report(&ep.problem, ep.log, object, nil, ReasonEndpointUnavailable, reasonInvalidEndpointURL,
			fmt.Errorf("an endpoint URL of %s is refused: %w", p.objectKind, err))
		return kit.Result{}
	}

	if err := p.startEndpoint(ctx, ep); err != nil {
		if ctx.Err() != nil {
			return kit.Result{}
		}
		p.endpointProblems.Report(&ep.problem, ep.log, object, nil, ReasonEndpointUnavailable, ReasonEndpointUnavailable,
			fmt.Errorf("endpoint %s: %w", redact.Text(url), err))
		return kit.Result{Retry: true}
	}
	recovered := p.endpointProblems.Resolve(&ep.problem, ep.log)
	ep.log.Info("Watching endpoint")
	if recovered {
		p.engine.Record(object, nil, corev1.EventTypeNormal, ReasonEndpointReady, "Endpoint "+redact.Text(url)+" is watched again")
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
	// A relist of one of the cache's informers queues the endpoint, whose sync checks it.
	wc, err := sharedcache.NewWildcard(cfg, p.opts.Scheme, func() { p.engine.Add(key{Endpoint: ep.url}) })
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
		wc.CloseIdleConnections()
	}

	syncCtx, cancelSync := context.WithTimeout(ctx, p.opts.CacheSyncTimeout)
	defer cancelSync()
	kind := fmt.Sprintf("%T", p.opts.ObjectToWatch)
	informer, err := wc.SharedInformer(syncCtx, p.opts.ObjectToWatch, cache.BlockUntilSynced(false))
	if err != nil {
		stop()
		return fmt.Errorf("watching %s through /clusters/*: %w", kind, err)
	}
	reg, err := informer.AddEventHandler(p.watchedObjectHandler(ep))
	if err != nil {
		stop()
		return fmt.Errorf("watching %s through /clusters/*: %w", kind, err)
	}
	removeHandler = func() { _ = informer.RemoveEventHandler(reg) }
	if !toolscache.WaitFor(syncCtx, "", reg.HasSyncedChecker()) {
		stop()
		return fmt.Errorf("%s through /clusters/* did not sync within %s (is the endpoint reachable, and may the provider list and watch there?)", kind, p.opts.CacheSyncTimeout)
	}
	ep.mu.Lock()
	ep.cache, ep.informer, ep.stopCache = wc, informer, stop
	ep.mu.Unlock()
	return nil
}

// checkEndpoint checks the caches of a running endpoint against live lists (the truth checks of
// internal/cache): those of
// the informers that listed again since the last check, after a watch that could not resume.
// Objects whose deletion the informers missed are removed and reported, and their handlers told;
// the logical clusters of the watched ones are synced again, which disengages those left without
// objects. A resync lists nothing: a watch that resumes from its resource version delivers the
// deletions it missed as events, and a relist is always noticed, so a periodic list of every
// endpoint would only cost the shards a full list of the watched type.
func (p *Provider) checkEndpoint(ctx context.Context, ep *endpoint) kit.Result {
	ep.mu.RLock()
	wc, informer := ep.cache, ep.informer
	ep.mu.RUnlock()
	if wc == nil {
		return kit.Result{}
	}
	watched := wc.TruthCheck(informer)
	checks := wc.Relisted()
	retry := false
	for _, check := range checks {
		checkCtx, cancel := context.WithTimeout(ctx, p.opts.CacheSyncTimeout)
		missed, err := check.Verify(checkCtx)
		cancel()
		for _, m := range missed {
			o, ok := kit.ObjectOf(m.Obj)
			if !ok {
				continue
			}
			name := logicalcluster.From(o)
			Errors.WithLabelValues(reasonMissedDeletion).Inc()
			ep.log.Info("The endpoint's watch missed a deletion; removed the object from the cache",
				"cluster", name.String(), "kind", check.Kind(), "object", client.ObjectKeyFromObject(o).String())
			if check == watched && name.IsValid() {
				p.engine.Add(key{LogicalCluster: name})
			}
		}
		if err != nil && ctx.Err() == nil {
			ep.log.Error(err, "Checking the endpoint's cache against a live list; retrying", "kind", check.Kind())
			check.Recheck()
			retry = true
		}
	}
	return kit.Result{Retry: retry}
}

// watchedObjectHandler returns the event handler of the endpoint's informer of the watched
// type: it queues the logical cluster of each object and tells Options.Handlers.
func (p *Provider) watchedObjectHandler(ep *endpoint) toolscache.ResourceEventHandlerFuncs {
	// object returns the object of a notification when it has a valid logical cluster.
	object := func(obj any) (client.Object, bool) {
		o, ok := kit.ObjectOf(obj)
		if !ok {
			return nil, false
		}
		name := logicalcluster.From(o)
		if !name.IsValid() {
			Errors.WithLabelValues(reasonInvalidObject).Inc()
			ep.log.Error(nil, "Ignoring an object without a valid kcp.io/cluster annotation", "object", o.GetName(), "annotation", name.String())
			return nil, false
		}
		p.engine.Add(key{LogicalCluster: name})
		return o, true
	}
	handlers := len(p.opts.Handlers) > 0
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if o, ok := object(obj); ok && handlers {
				o = copyOf(o)
				p.runHandlers(ep, "OnAdd", o, func(h Handler) { h.OnAdd(o) })
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			o, ok := object(newObj)
			old, oldOK := kit.ObjectOf(oldObj)
			if ok && oldOK && handlers {
				o, old = copyOf(o), copyOf(old)
				p.runHandlers(ep, "OnUpdate", o, func(h Handler) { h.OnUpdate(old, o) })
			}
		},
		DeleteFunc: func(obj any) {
			if o, ok := object(obj); ok && handlers {
				o = copyOf(o)
				p.runHandlers(ep, "OnDelete", o, func(h Handler) { h.OnDelete(o) })
			}
		},
	}
}

// stopEndpoint stops an endpoint the endpoint object no longer lists: no logical cluster engages
// through it any more, those engaged through it are disengaged (or engaged through another
// endpoint that serves them), and only then its cache stops, so that no controller reads from a
// stopped cache.
func (p *Provider) stopEndpoint(ctx context.Context, ep *endpoint) {
	ep.mu.Lock()
	ep.stopping = true
	ep.mu.Unlock()
	for _, name := range p.engagedThrough(ep) {
		p.engine.Add(key{LogicalCluster: name})
	}
	// Each of their syncs disengages them. When ctx ends instead, the provider stops: the
	// engine disengages every logical cluster, then stopAllEndpoints stops the cache.
	if err := wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(context.Context) (bool, error) {
		return len(p.engagedThrough(ep)) == 0, nil
	}); err != nil {
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
	return sharedcache.ObjectsOf(informer, name)
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
	return sharedcache.LogicalClusters(informer)
}
