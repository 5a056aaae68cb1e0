// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kcp

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"sync"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	kcpcache "github.com/kcp-dev/apimachinery/v2/pkg/cache"
	kcpinformers "github.com/kcp-dev/apimachinery/v2/third_party/informers"
	"github.com/kcp-dev/logicalcluster/v3"

	"mcr.dev/core/clusters"
)

// wildcardCache is the cache of one endpoint: a controller-runtime cache on <url>/clusters/*
// whose informers are kcp's cluster-aware ones (store key <cluster>|<namespace>/<name>, indexes
// by cluster and by cluster and namespace). Every logical cluster of the endpoint reads from it
// through a scopedCache, so there is one informer per type per endpoint, whatever the number of
// logical clusters.
//
// Its own Get and List must not be used: they assume namespace/name store keys. Reads go
// through scopedCache.
type wildcardCache struct {
	cache.Cache
	scheme     *runtime.Scheme
	mapper     apimeta.RESTMapper
	httpClient *http.Client

	mu      sync.Mutex
	indexed map[string]struct{} // clusters.Index keys of the field indexes added

	// checksMu guards checks, the truth check of every informer of the cache (truth.go),
	// which the informer constructor adds to while mu may be held.
	checksMu sync.Mutex
	checks   []*truthCheck
	// onRelist is told when one of the informers lists again after its first list.
	onRelist func()
}

// newWildcardCache returns the cache of the endpoint cfg points at; onRelist is called when
// one of its informers lists again, after a watch that could not resume.
func newWildcardCache(cfg *rest.Config, scheme *runtime.Scheme, onRelist func()) (*wildcardCache, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.Host = strings.TrimSuffix(cfg.Host, "/") + logicalcluster.Wildcard.RequestPath()
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the HTTP client for %s: %w", cfg.Host, err)
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("creating the REST mapper for %s: %w", cfg.Host, err)
	}
	wc := &wildcardCache{
		scheme:     scheme,
		mapper:     mapper,
		httpClient: httpClient,
		indexed:    map[string]struct{}{},
		onRelist:   onRelist,
	}
	wc.Cache, err = cache.New(cfg, cache.Options{
		Scheme:      scheme,
		Mapper:      mapper,
		HTTPClient:  httpClient,
		NewInformer: wc.newClusterAwareInformer,
	})
	if err != nil {
		return nil, fmt.Errorf("creating the cache for %s: %w", cfg.Host, err)
	}
	return wc, nil
}

// newClusterAwareInformer is the informer constructor of the wildcard cache: kcp's informer,
// whose store keys objects by logical cluster, so that objects of the same namespace and name in
// different logical clusters do not overwrite each other. Its ListerWatcher tells the cache's
// truth check about relists (truth.go).
func (c *wildcardCache) newClusterAwareInformer(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
	all := maps.Clone(indexers)
	if all == nil {
		all = toolscache.Indexers{}
	}
	all[kcpcache.ClusterIndexName] = kcpcache.ClusterIndexFunc
	all[kcpcache.ClusterAndNamespaceIndexName] = kcpcache.ClusterAndNamespaceIndexFunc
	check := &truthCheck{kind: fmt.Sprintf("%T", obj), lw: toolscache.ToListerWatcherWithContext(lw), onRelist: c.onRelist}
	if gvk, err := apiutil.GVKForObject(obj, c.scheme); err == nil {
		check.kind = gvk.Kind
	}
	informer := kcpinformers.NewSharedIndexInformer(relistWatcher{inner: check.lw, check: check}, obj, resync, all)
	check.informer = informer
	// kcp's informer is a ResourceEventHandler itself, which is how it notifies its handlers.
	check.notify, _ = informer.(toolscache.ResourceEventHandler)
	c.checksMu.Lock()
	c.checks = append(c.checks, check)
	c.checksMu.Unlock()
	return informer
}

// truthCheck returns the truth check of informer, nil if it is not one of the cache's.
func (c *wildcardCache) truthCheck(informer toolscache.SharedIndexInformer) *truthCheck {
	c.checksMu.Lock()
	defer c.checksMu.Unlock()
	for _, check := range c.checks {
		if check.informer == informer {
			return check
		}
	}
	return nil
}

// relisted returns the truth checks of the informers that listed again since they were last
// returned.
func (c *wildcardCache) relisted() []*truthCheck {
	c.checksMu.Lock()
	defer c.checksMu.Unlock()
	var due []*truthCheck
	for _, check := range c.checks {
		if check.takeRelisted() {
			due = append(due, check)
		}
	}
	return due
}

// informerFor describes the shared informer serving one type.
type informerFor struct {
	informer toolscache.SharedIndexInformer
	gvk      schema.GroupVersionKind
	mapping  *apimeta.RESTMapping
}

// sharedInformer returns the endpoint's informer for the type of obj (an object or a list),
// creating it on first use; opts are those of cache.Cache.GetInformer (by default it waits until
// the informer has synced).
func (c *wildcardCache) sharedInformer(ctx context.Context, obj runtime.Object, opts ...cache.InformerGetOption) (toolscache.SharedIndexInformer, error) {
	inf, err := c.informerFor(ctx, obj, opts...)
	if err != nil {
		return nil, err
	}
	return inf.informer, nil
}

func (c *wildcardCache) informerFor(ctx context.Context, obj runtime.Object, opts ...cache.InformerGetOption) (informerFor, error) {
	gvk, err := apiutil.GVKForObject(obj, c.scheme)
	if err != nil {
		return informerFor{}, err
	}
	_, isList := obj.(client.ObjectList)
	if isList {
		gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	}
	mapping, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return informerFor{}, err
	}
	var item client.Object
	switch obj.(type) {
	case runtime.Unstructured:
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		item = u
	case *metav1.PartialObjectMetadata, *metav1.PartialObjectMetadataList:
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(gvk)
		item = m
	default:
		if o, ok := obj.(client.Object); ok && !isList {
			item = o
			break
		}
		created, err := c.scheme.New(gvk)
		if err != nil {
			return informerFor{}, err
		}
		o, ok := created.(client.Object)
		if !ok {
			return informerFor{}, fmt.Errorf("%s is not a client.Object", gvk)
		}
		item = o
	}
	inf, err := c.GetInformer(ctx, item, opts...)
	if err != nil {
		return informerFor{}, err
	}
	sii, ok := inf.(toolscache.SharedIndexInformer)
	if !ok {
		return informerFor{}, fmt.Errorf("the informer for %s is a %T, not a SharedIndexInformer", gvk, inf)
	}
	return informerFor{informer: sii, gvk: gvk, mapping: mapping}, nil
}

// fieldIndexName is the name of the informer index of a field added by IndexField.
func fieldIndexName(field string) string { return "mcr.dev/field:" + field }

// fieldIndexKey is a key of a field index: the value of the field in one logical cluster, in
// one namespace or, with namespace "", in all of them.
func fieldIndexKey(cluster logicalcluster.Name, namespace, value string) string {
	return cluster.String() + "|" + namespace + "|" + value
}

// IndexField adds a field index to the endpoint's informer of obj's type, once: every logical
// cluster of the endpoint asks for it, and the first does it. The index keys each value by the
// object's logical cluster (and namespace), so that a scoped List with a field selector finds the
// objects of its own logical cluster only.
func (c *wildcardCache) IndexField(ctx context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	key := clusters.Index{Object: obj, Field: field}.Key()
	c.mu.Lock()
	defer c.mu.Unlock() // held throughout, so that a concurrent second call waits for the first
	if _, done := c.indexed[key]; done {
		return nil
	}
	informer, err := c.sharedInformer(ctx, obj, cache.BlockUntilSynced(false))
	if err != nil {
		return fmt.Errorf("indexing field %q: %w", field, err)
	}
	err = informer.AddIndexers(toolscache.Indexers{fieldIndexName(field): func(item any) ([]string, error) {
		o, ok := item.(client.Object)
		if !ok {
			return nil, nil
		}
		cluster := logicalcluster.From(o)
		values := extract(o)
		keys := make([]string, 0, 2*len(values))
		for _, v := range values {
			keys = append(keys, fieldIndexKey(cluster, "", v))
			if ns := o.GetNamespace(); ns != "" {
				keys = append(keys, fieldIndexKey(cluster, ns, v))
			}
		}
		return keys, nil
	}})
	if err != nil {
		return fmt.Errorf("indexing field %q: %w", field, err)
	}
	c.indexed[key] = struct{}{}
	return nil
}
