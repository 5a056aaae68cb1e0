// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kcp

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kcp-dev/logicalcluster/v3"

	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/redact"

	sharedcache "mcr.dev/providers/kcp/internal/cache"
)

// PathAnnotation is the annotation that holds the workspace path of a logical cluster
// (core.kcp.io LogicalClusterPathAnnotationKey). The provider reads it from the watched objects
// for GetByPath.
const PathAnnotation = "kcp.io/path"

// logicalCluster is a logical cluster as the provider engages it: the shared-cache cluster of
// internal/cache, and the endpoint it was built on, which the provider's discovery follows.
type logicalCluster struct {
	*sharedcache.Cluster
	endpoint *endpoint
}

// Start runs the cluster while it is engaged, counted in LogicalClusters.
func (c *logicalCluster) Start(ctx context.Context) error {
	LogicalClusters.Inc()
	defer LogicalClusters.Dec()
	return c.Cluster.Start(ctx)
}

// syncLogicalCluster brings the engagement of one logical cluster in line with its objects of
// the watched type on the running endpoints: engaged through an endpoint where one of them is
// ready, disengaged when none is or none is left. A logical cluster lives on one shard; while it
// shows on two (during a move), the endpoint that engaged it keeps it as long as it is ready
// there.
func (p *Provider) syncLogicalCluster(ctx context.Context, k key) kit.Result {
	name := multicluster.ClusterName(k.LogicalCluster)
	current := p.engagedView(name)

	var serving *endpoint
	var servingObjs []client.Object
	found := 0
	var path logicalcluster.Path
	for _, ep := range p.runningEndpoints() {
		objs, err := ep.objects(k.LogicalCluster)
		if err != nil {
			p.log.Error(err, "Reading the logical cluster's objects from the wildcard cache", "cluster", name, "endpoint", redact.Text(ep.url))
			return kit.Result{Retry: true}
		}
		found += len(objs)
		for _, o := range objs {
			if v := o.GetAnnotations()[PathAnnotation]; v != "" {
				path = logicalcluster.NewPath(v)
			}
		}
		if p.anyReady(ctx, objs) && (serving == nil || current != nil && current.endpoint == ep) {
			serving, servingObjs = ep, objs
		}
	}
	switch {
	case found == 0:
		p.paths.forget(k.LogicalCluster)
	case !path.Empty():
		p.paths.set(k.LogicalCluster, path)
	}

	moved := current != nil && current.endpoint != serving
	var why string
	switch {
	case moved && !current.endpoint.running():
		why = "its endpoint is no longer served"
	case found == 0:
		why = "its last object is gone"
	case serving == nil:
		why = "none of its objects is ready"
	case moved:
		why = "it is served by another endpoint now"
	}
	if why != "" {
		p.disengage(name, why)
		current = nil
	}
	if serving == nil {
		return kit.Result{}
	}
	return p.engageThrough(ctx, k, serving, current, len(servingObjs))
}

// anyReady reports whether one of objs makes its logical cluster ready.
func (p *Provider) anyReady(ctx context.Context, objs []client.Object) bool {
	for _, o := range objs {
		if p.opts.IsReady(ctx, o) {
			return true
		}
	}
	return false
}

// engageThrough engages the logical cluster of k through ep: with current, the view engaged
// through ep already, while it lives; with a new view otherwise.
func (p *Provider) engageThrough(ctx context.Context, k key, ep *endpoint, current *logicalCluster, objects int) kit.Result {
	name := multicluster.ClusterName(k.LogicalCluster)
	// Held for reading until the engagement is done, so that a stopping endpoint waits for it.
	ep.mu.RLock()
	defer ep.mu.RUnlock()
	if ep.stopping {
		// Its stop queues the logical clusters engaged through it; this one may be served
		// by another endpoint.
		return kit.Result{Retry: true}
	}
	cl := current
	if cl != nil && !cl.Stopped() && p.engine.IsEngaged(name) {
		// Changes of an engaged cluster's objects change nothing while one is ready.
		p.log.V(1).Info("Logical cluster stays engaged", "cluster", name, "objects", objects)
	} else {
		// A view whose engagement failed or ended cannot be engaged again.
		var cacheOnly schema.GroupKind
		if p.vw == initializingWorkspaces {
			cacheOnly = p.watchedKind
		}
		view, err := sharedcache.NewCluster(ep.cache, ep.informer, k.LogicalCluster, p.log, cacheOnly)
		if err != nil {
			return p.engine.Fail(k, kit.Member{Name: name}, kit.Permanent(kit.ReasonClusterSetupFailed, err))
		}
		cl = &logicalCluster{Cluster: view, endpoint: ep}
		p.mu.Lock()
		p.engaged[name] = cl
		p.mu.Unlock()
	}
	return p.engine.Engage(ctx, k, kit.Member{Name: name, Cluster: cl, From: "endpoint " + redact.Text(ep.url)})
}

// engagedView returns the view engaged, or being engaged, for the logical cluster name.
func (p *Provider) engagedView(name multicluster.ClusterName) *logicalCluster {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.engaged[name]
}

// engagedThrough returns the logical clusters whose engaged view reads from ep's cache.
func (p *Provider) engagedThrough(ep *endpoint) []logicalcluster.Name {
	p.mu.Lock()
	defer p.mu.Unlock()
	var names []logicalcluster.Name
	for name, cl := range p.engaged {
		if cl.endpoint == ep {
			names = append(names, logicalcluster.Name(name))
		}
	}
	return names
}

// disengage disengages the logical cluster name, if it is engaged, and forgets its view.
func (p *Provider) disengage(name multicluster.ClusterName, why string) {
	p.engine.Disengage(name, nil, why)
	p.mu.Lock()
	delete(p.engaged, name)
	p.mu.Unlock()
}
