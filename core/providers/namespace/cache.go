// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package namespace

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// namespacedCache is the cache of a namespace-cluster: reads go to the shared host cache
// through the namespace mapping, informers are scoped views of the host's.
type namespacedCache struct {
	reader
	provider *Provider
	hostObj  cache.Cache
	handlers *handlerSet
}

var _ cache.Cache = &namespacedCache{}

func (c *namespacedCache) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	informer, err := c.hostObj.GetInformer(ctx, obj, opts...)
	if err != nil {
		return nil, err
	}
	namespaced, err := c.scope.isNamespaced(obj)
	if err != nil {
		return nil, err
	}
	return c.scoped(informer, namespaced)
}

func (c *namespacedCache) GetInformerForKind(ctx context.Context, gvk schema.GroupVersionKind, opts ...cache.InformerGetOption) (cache.Informer, error) {
	informer, err := c.hostObj.GetInformerForKind(ctx, gvk, opts...)
	if err != nil {
		return nil, err
	}
	namespaced, err := c.scope.isNamespacedKind(gvk)
	if err != nil {
		return nil, err
	}
	return c.scoped(informer, namespaced)
}

func (c *namespacedCache) scoped(informer cache.Informer, namespaced bool) (cache.Informer, error) {
	d, err := c.provider.dispatcherFor(informer)
	if err != nil {
		return nil, err
	}
	si := &scopedInformer{dispatcher: d, owner: c.handlers}
	if namespaced {
		si.namespace, si.rewrite = c.scope.namespace, true
	}
	return si, nil
}

// RemoveInformer removes this namespace-cluster's handlers from the informer of obj. The shared
// host informer keeps running for the other namespace-clusters.
func (c *namespacedCache) RemoveInformer(ctx context.Context, obj client.Object) error {
	informer, err := c.hostObj.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
	if err != nil {
		return err
	}
	d, err := c.provider.dispatcherFor(informer)
	if err != nil {
		return err
	}
	c.handlers.removeIn(d)
	return nil
}

// Start does nothing but wait for ctx: the host cache is started by its owner.
func (c *namespacedCache) Start(ctx context.Context) error {
	<-ctx.Done()
	return nil
}

func (c *namespacedCache) WaitForCacheSync(ctx context.Context) bool {
	return c.hostObj.WaitForCacheSync(ctx)
}

// IndexField indexes the shared host cache, once for all namespace-clusters.
func (c *namespacedCache) IndexField(ctx context.Context, obj client.Object, field string, extractValue client.IndexerFunc) error {
	return c.provider.IndexField(ctx, obj, field, extractValue)
}
