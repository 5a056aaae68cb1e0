// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package reference

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
)

// fleetWideCluster is the FleetWideList bug: its cache answers field-indexed Lists from the
// caches of every engaged cluster, as if the index were fleet-wide.
type fleetWideCluster struct {
	cluster.Cluster
	p *Provider
}

func (c *fleetWideCluster) GetCache() cache.Cache {
	return &fleetWideCache{Cache: c.Cluster.GetCache(), p: c.p}
}

type fleetWideCache struct {
	cache.Cache
	p *Provider
}

func (c *fleetWideCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	if lo.FieldSelector == nil || lo.FieldSelector.Empty() {
		return c.Cache.List(ctx, list, opts...)
	}
	c.p.mu.Lock()
	var caches []cache.Cache
	for _, e := range c.p.engaged {
		if fw, ok := e.cluster.(*fleetWideCluster); ok {
			caches = append(caches, fw.Cluster.GetCache())
		}
	}
	c.p.mu.Unlock()
	var all []runtime.Object
	for _, other := range caches {
		part := list.DeepCopyObject().(client.ObjectList)
		if err := other.List(ctx, part, opts...); err != nil {
			return err
		}
		items, err := meta.ExtractList(part)
		if err != nil {
			return err
		}
		all = append(all, items...)
	}
	return meta.SetList(list, all)
}
