// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package cache

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

	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	kcpcache "github.com/kcp-dev/apimachinery/v2/pkg/cache"
	kcpinformers "github.com/kcp-dev/apimachinery/v2/third_party/informers"
	"github.com/kcp-dev/logicalcluster/v3"

	"mcr.dev/core/clusters"
)

// Wildcard is the cache of one endpoint: a controller-runtime cache on <url>/clusters/*
// whose informers are kcp's cluster-aware ones (store key <cluster>|<namespace>/<name>, indexes
// by cluster and by cluster and namespace). Every logical cluster of the endpoint reads from it
// through a Scoped view, so there is one informer per type per endpoint, whatever the number of
// logical clusters.
//
// The controller-runtime cache is not exposed: its Get and List assume namespace/name store
// keys. Reads go through Scoped.
type Wildcard struct {
	cache crcache.Cache
	// config is the endpoint's: the provider's config with the endpoint URL as host.
	config     *rest.Config
	scheme     *runtime.Scheme
	mapper     apimeta.RESTMapper
	httpClient *http.Client

	mu      sync.Mutex
	indexed map[string]struct{} // clusters.Index keys of the field indexes added

	// checksMu guards checks, the truth check of every informer of the cache (truth.go),
	// which the informer constructor adds to while mu may be held.
	checksMu sync.Mutex
	checks   []*TruthCheck
	// onRelist is told when one of the informers lists again after its first list.
	onRelist func()
}

// NewWildcard returns the cache of the endpoint cfg points at (cfg.Host is the endpoint URL); it
// runs once started. onRelist is called when one of its informers lists again, after a watch
// that could not resume: the endpoint's truth checks are then due (Relisted).
func NewWildcard(cfg *rest.Config, scheme *runtime.Scheme, onRelist func()) (*Wildcard, error) {
	endpointConfig := rest.CopyConfig(cfg)
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
	wc := &Wildcard{
		config:     endpointConfig,
		scheme:     scheme,
		mapper:     mapper,
		httpClient: httpClient,
		indexed:    map[string]struct{}{},
		onRelist:   onRelist,
	}
	wc.cache, err = crcache.New(cfg, crcache.Options{
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
func (c *Wildcard) newClusterAwareInformer(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
	all := maps.Clone(indexers)
	if all == nil {
		all = toolscache.Indexers{}
	}
	all[kcpcache.ClusterIndexName] = kcpcache.ClusterIndexFunc
	all[kcpcache.ClusterAndNamespaceIndexName] = kcpcache.ClusterAndNamespaceIndexFunc
	check := &TruthCheck{kind: fmt.Sprintf("%T", obj), lw: toolscache.ToListerWatcherWithContext(lw), onRelist: c.onRelist}
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

// Start runs the cache until ctx ends.
func (c *Wildcard) Start(ctx context.Context) error { return c.cache.Start(ctx) }

// URL returns the endpoint URL the cache watches under.
func (c *Wildcard) URL() string { return c.config.Host }

// CloseIdleConnections closes the idle connections of the cache's HTTP client, once it has
// stopped.
func (c *Wildcard) CloseIdleConnections() { c.httpClient.CloseIdleConnections() }

// TruthCheck returns the truth check of informer, nil if it is not one of the cache's.
func (c *Wildcard) TruthCheck(informer toolscache.SharedIndexInformer) *TruthCheck {
	c.checksMu.Lock()
	defer c.checksMu.Unlock()
	for _, check := range c.checks {
		if check.informer == informer {
			return check
		}
	}
	return nil
}

// Relisted returns the truth checks of the informers that listed again since they were last
// returned.
func (c *Wildcard) Relisted() []*TruthCheck {
	c.checksMu.Lock()
	defer c.checksMu.Unlock()
	var due []*TruthCheck
	for _, check := range c.checks {
		if check.takeRelisted() {
			due = append(due, check)
		}
	}
	return due
}

// TypeInformer is the shared informer serving one type, with the type's kind and REST mapping.
type TypeInformer struct {
	Informer toolscache.SharedIndexInformer
	GVK      schema.GroupVersionKind
	Mapping  *apimeta.RESTMapping
}

// SharedInformer returns the endpoint's informer for the type of obj (an object or a list),
// creating it on first use; opts are those of controller-runtime's Cache.GetInformer (by default
// it waits until the informer has synced).
func (c *Wildcard) SharedInformer(ctx context.Context, obj runtime.Object, opts ...crcache.InformerGetOption) (toolscache.SharedIndexInformer, error) {
	inf, err := c.InformerFor(ctx, obj, opts...)
	if err != nil {
		return nil, err
	}
	return inf.Informer, nil
}

// InformerFor is SharedInformer, with the kind and REST mapping of the type.
func (c *Wildcard) InformerFor(ctx context.Context, obj runtime.Object, opts ...crcache.InformerGetOption) (TypeInformer, error) {
	gvk, err := apiutil.GVKForObject(obj, c.scheme)
	if err != nil {
		return TypeInformer{}, err
	}
	_, isList := obj.(client.ObjectList)
	if isList {
		gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	}
	mapping, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return TypeInformer{}, err
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
			return TypeInformer{}, err
		}
		o, ok := created.(client.Object)
		if !ok {
			return TypeInformer{}, fmt.Errorf("%s is not a client.Object", gvk)
		}
		item = o
	}
	inf, err := c.cache.GetInformer(ctx, item, opts...)
	if err != nil {
		return TypeInformer{}, err
	}
	sii, ok := inf.(toolscache.SharedIndexInformer)
	if !ok {
		return TypeInformer{}, fmt.Errorf("the informer for %s is a %T, not a SharedIndexInformer", gvk, inf)
	}
	return TypeInformer{Informer: sii, GVK: gvk, Mapping: mapping}, nil
}

// fieldIndexName is the name of the informer index of a field added by indexField.
func fieldIndexName(field string) string { return "mcr.dev/field:" + field }

// fieldIndexKey is a key of a field index: the value of the field in one logical cluster, in
// one namespace or, with namespace "", in all of them.
func fieldIndexKey(cluster logicalcluster.Name, namespace, value string) string {
	return cluster.String() + "|" + namespace + "|" + value
}

// indexField adds a field index to the endpoint's informer of obj's type, once: every logical
// cluster of the endpoint asks for it, and the first does it. The index keys each value by the
// object's logical cluster (and namespace), so that a scoped List with a field selector finds the
// objects of its own logical cluster only.
func (c *Wildcard) indexField(ctx context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	key := clusters.Index{Object: obj, Field: field}.Key()
	c.mu.Lock()
	defer c.mu.Unlock() // held throughout, so that a concurrent second call waits for the first
	if _, done := c.indexed[key]; done {
		return nil
	}
	informer, err := c.SharedInformer(ctx, obj, crcache.BlockUntilSynced(false))
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

// ObjectsOf returns the objects of logical cluster name in informer, one of a Wildcard's, from
// its cluster index. They are the cache's own: callers copy before changing or handing them on.
func ObjectsOf(informer toolscache.SharedIndexInformer, name logicalcluster.Name) ([]client.Object, error) {
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

// LogicalClusters returns the valid names of the logical clusters that have objects in
// informer, one of a Wildcard's.
func LogicalClusters(informer toolscache.SharedIndexInformer) []logicalcluster.Name {
	var names []logicalcluster.Name
	for _, v := range informer.GetIndexer().ListIndexFuncValues(kcpcache.ClusterIndexName) {
		if name := logicalcluster.Name(v); name.IsValid() {
			names = append(names, name)
		}
	}
	return names
}
