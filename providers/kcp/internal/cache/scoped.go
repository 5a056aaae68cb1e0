// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package cache

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	toolscache "k8s.io/client-go/tools/cache"

	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	kcpcache "github.com/kcp-dev/apimachinery/v2/pkg/cache"
	"github.com/kcp-dev/logicalcluster/v3"

	"mcr.dev/core/providers/kit"
)

var _ crcache.Cache = &Scoped{}

// Scoped is the cache of one logical cluster: a view of its endpoint's shared Wildcard cache
// that reads, indexes and notifies only that logical cluster's objects. Informers it is asked
// for are created on the Wildcard cache, once per endpoint, and shared.
//
// Every event handler added through it is remembered and removed when the logical cluster is
// disengaged (stop), so that nothing of a disengaged cluster stays registered on the shared
// informers.
type Scoped struct {
	shared  *Wildcard
	cluster logicalcluster.Name
	// watched is the endpoint's informer of the watched type, whose sync WaitForCacheSync waits
	// for.
	watched toolscache.SharedIndexInformer
	// only, when not empty, is the one kind the cache serves: the endpoint lists no other
	// across logical clusters (initializing workspaces).
	only schema.GroupKind

	mu       sync.Mutex
	stopped  bool
	handlers map[toolscache.ResourceEventHandlerRegistration]toolscache.SharedIndexInformer
	// indexed are the endpoint's informers this cache added an index to: WaitForCacheSync
	// waits for them too, so that a cluster is engaged with its indexes answering (rule 3 of
	// the provider contract).
	indexed []toolscache.SharedIndexInformer
}

func newScoped(shared *Wildcard, watched toolscache.SharedIndexInformer, cluster logicalcluster.Name) *Scoped {
	return &Scoped{
		shared:   shared,
		cluster:  cluster,
		watched:  watched,
		handlers: map[toolscache.ResourceEventHandlerRegistration]toolscache.SharedIndexInformer{},
	}
}

// errDisengaged is returned when a handler is added through the cache of a disengaged cluster.
var errDisengaged = errors.New("the logical cluster was disengaged")

// stop removes every event handler added through the cache; later additions fail.
func (c *Scoped) stop() {
	c.mu.Lock()
	c.stopped = true
	handlers := c.handlers
	c.handlers = map[toolscache.ResourceEventHandlerRegistration]toolscache.SharedIndexInformer{}
	c.mu.Unlock()
	for reg, informer := range handlers {
		_ = informer.RemoveEventHandler(reg)
	}
}

// isStopped reports whether stop was called.
func (c *Scoped) isStopped() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stopped
}

// Cluster returns the name of the logical cluster the view serves.
func (c *Scoped) Cluster() logicalcluster.Name { return c.cluster }

// Shared returns the endpoint's cache the view reads from, which it shares with the endpoint's
// other logical clusters.
func (c *Scoped) Shared() *Wildcard { return c.shared }

// HandlerCount returns how many event handlers are registered through the cache.
func (c *Scoped) HandlerCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.handlers)
}

// Serves fails for a type the cache does not serve (see NewCluster).
func (c *Scoped) Serves(obj runtime.Object) error {
	if c.only.Empty() {
		return nil
	}
	gvk, err := apiutil.GVKForObject(obj, c.shared.scheme)
	if err != nil {
		return err
	}
	if _, isList := obj.(client.ObjectList); isList {
		gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	}
	return c.servesKind(gvk.GroupKind())
}

func (c *Scoped) servesKind(gk schema.GroupKind) error {
	if c.only.Empty() || gk == c.only {
		return nil
	}
	return fmt.Errorf("the cache of logical cluster %q serves %s only, which its endpoint lists across logical clusters, not %s: read it with the cluster's client, which reads live", c.cluster, c.only, gk)
}

// Get reads an object of the logical cluster from the shared informer of its type, waiting
// until that informer has synced.
func (c *Scoped) Get(ctx context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	if err := c.Serves(obj); err != nil {
		return err
	}
	inf, err := c.shared.InformerFor(ctx, obj)
	if err != nil {
		return err
	}
	if inf.Mapping.Scope.Name() == apimeta.RESTScopeNameRoot {
		key.Namespace = ""
	}
	item, exists, err := inf.Informer.GetIndexer().GetByKey(kcpcache.ToClusterAwareKey(c.cluster.String(), key.Namespace, key.Name))
	if err != nil {
		return err
	}
	if !exists {
		return apierrors.NewNotFound(inf.Mapping.Resource.GroupResource(), key.Name)
	}
	return copyInto(item, obj, inf.GVK)
}

// copyInto deep-copies a cached object into out, as controller-runtime's cache reader does.
func copyInto(item any, out client.Object, gvk schema.GroupVersionKind) error {
	obj, ok := item.(runtime.Object)
	if !ok {
		return fmt.Errorf("cache contained %T, which is not an Object", item)
	}
	obj = obj.DeepCopyObject()
	outVal, objVal := reflect.ValueOf(out), reflect.ValueOf(obj)
	if !objVal.Type().AssignableTo(outVal.Type()) {
		return fmt.Errorf("cache had type %s, but %s was asked for", objVal.Type(), outVal.Type())
	}
	reflect.Indirect(outVal).Set(reflect.Indirect(objVal))
	out.GetObjectKind().SetGroupVersionKind(gvk)
	return nil
}

// List lists objects of the logical cluster from the shared informer of their type, waiting
// until it has synced. Field selectors must be exact matches on fields indexed with IndexField,
// as with controller-runtime's cache.
func (c *Scoped) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	o := client.ListOptions{}
	o.ApplyOptions(opts)
	if o.Continue != "" {
		return errors.New("continue list option is not supported by the cache")
	}
	if err := c.Serves(list); err != nil {
		return err
	}
	inf, err := c.shared.InformerFor(ctx, list)
	if err != nil {
		return err
	}
	objs, err := c.Select(inf, &o, o.Limit)
	if err != nil {
		return err
	}
	items := make([]runtime.Object, len(objs))
	for i, obj := range objs {
		items[i] = obj
	}
	return apimeta.SetList(list, items)
}

// Select returns deep copies of the logical cluster's objects in inf, the shared informer of
// their type, that o selects by namespace, by exact matches on fields indexed with IndexField and
// by labels, with the type's kind set; at most limit when limit is positive. List reads through
// it, and so do the provider's fleet-wide reads, one informer lookup for many logical clusters.
func (c *Scoped) Select(inf TypeInformer, o *client.ListOptions, limit int64) ([]client.Object, error) {
	indexer := inf.Informer.GetIndexer()
	namespace := o.Namespace
	if inf.Mapping.Scope.Name() == apimeta.RESTScopeNameRoot {
		namespace = ""
	}
	var items []any
	var err error
	switch {
	case o.FieldSelector != nil && !o.FieldSelector.Empty():
		items, err = c.byFields(indexer, o.FieldSelector, namespace)
	case namespace != "":
		items, err = indexer.ByIndex(kcpcache.ClusterAndNamespaceIndexName, kcpcache.ClusterAndNamespaceIndexKey(c.cluster, namespace))
	default:
		items, err = indexer.ByIndex(kcpcache.ClusterIndexName, kcpcache.ClusterIndexKey(c.cluster))
	}
	if err != nil {
		return nil, err
	}
	objs := make([]client.Object, 0, len(items))
	for _, item := range items {
		if limit > 0 && int64(len(objs)) >= limit {
			break
		}
		obj, ok := item.(client.Object)
		if !ok {
			return nil, fmt.Errorf("cache contained %T, which is not an Object", item)
		}
		if o.LabelSelector != nil && !o.LabelSelector.Matches(labels.Set(obj.GetLabels())) {
			continue
		}
		out, ok := obj.DeepCopyObject().(client.Object)
		if !ok {
			return nil, fmt.Errorf("a copy of %T is not an Object", obj)
		}
		out.GetObjectKind().SetGroupVersionKind(inf.GVK)
		objs = append(objs, out)
	}
	return objs, nil
}

// byFields returns the objects of the logical cluster whose indexed fields match every
// requirement of an exact-match selector: the first requirement through its index, the others
// by filtering.
func (c *Scoped) byFields(indexer toolscache.Indexer, sel fields.Selector, namespace string) ([]any, error) {
	reqs := sel.Requirements()
	for _, r := range reqs {
		if r.Operator != selection.Equals && r.Operator != selection.DoubleEquals {
			return nil, fmt.Errorf("non-exact field matches are not supported by the cache (field %q)", r.Field)
		}
	}
	items, err := indexer.ByIndex(fieldIndexName(reqs[0].Field), fieldIndexKey(c.cluster, namespace, reqs[0].Value))
	if err != nil {
		return nil, err
	}
	indexers := indexer.GetIndexers()
	for _, r := range reqs[1:] {
		fn, ok := indexers[fieldIndexName(r.Field)]
		if !ok {
			return nil, fmt.Errorf("index with name %s does not exist", fieldIndexName(r.Field))
		}
		want := fieldIndexKey(c.cluster, namespace, r.Value)
		items = slices.DeleteFunc(items, func(item any) bool {
			keys, err := fn(item)
			return err != nil || !slices.Contains(keys, want)
		})
	}
	return items, nil
}

// GetInformer returns the shared informer of obj's type, seen through this logical cluster.
func (c *Scoped) GetInformer(ctx context.Context, obj client.Object, opts ...crcache.InformerGetOption) (crcache.Informer, error) {
	if err := c.Serves(obj); err != nil {
		return nil, err
	}
	inf, err := c.shared.SharedInformer(ctx, obj, opts...)
	if err != nil {
		return nil, err
	}
	return &scopedInformer{cache: c, informer: inf}, nil
}

// GetInformerForKind returns the shared informer of a kind, seen through this logical cluster.
func (c *Scoped) GetInformerForKind(ctx context.Context, gvk schema.GroupVersionKind, opts ...crcache.InformerGetOption) (crcache.Informer, error) {
	if err := c.servesKind(gvk.GroupKind()); err != nil {
		return nil, err
	}
	inf, err := c.shared.cache.GetInformerForKind(ctx, gvk, opts...)
	if err != nil {
		return nil, err
	}
	sii, ok := inf.(toolscache.SharedIndexInformer)
	if !ok {
		return nil, fmt.Errorf("the informer for %s is a %T, not a SharedIndexInformer", gvk, inf)
	}
	return &scopedInformer{cache: c, informer: sii}, nil
}

// RemoveInformer removes the event handlers this logical cluster added to the informer of
// obj's type. The informer itself keeps serving the endpoint's other logical clusters.
func (c *Scoped) RemoveInformer(ctx context.Context, obj client.Object) error {
	if err := c.Serves(obj); err != nil {
		return err
	}
	inf, err := c.shared.SharedInformer(ctx, obj, crcache.BlockUntilSynced(false))
	if err != nil {
		return err
	}
	c.mu.Lock()
	var remove []toolscache.ResourceEventHandlerRegistration
	for reg, owner := range c.handlers {
		if owner == inf {
			remove = append(remove, reg)
			delete(c.handlers, reg)
		}
	}
	c.mu.Unlock()
	for _, reg := range remove {
		_ = inf.RemoveEventHandler(reg)
	}
	return nil
}

// Start fails: the cache of a logical cluster is a view of its endpoint's cache, which the
// provider runs.
func (c *Scoped) Start(context.Context) error {
	return fmt.Errorf("the cache of logical cluster %q is part of its endpoint's shared cache, which the kcp provider runs", c.cluster)
}

// WaitForCacheSync waits for the endpoint's informer of the watched type and those this cache
// added an index to. Informers of other types are waited for by those who use them (sources
// wait for their handlers to sync, reads for their informer), so that one type the endpoint
// cannot serve does not hold up every logical cluster.
func (c *Scoped) WaitForCacheSync(ctx context.Context) bool {
	c.mu.Lock()
	synced := []toolscache.DoneChecker{c.watched.HasSyncedChecker()}
	for _, inf := range c.indexed {
		synced = append(synced, inf.HasSyncedChecker())
	}
	c.mu.Unlock()
	return toolscache.WaitFor(ctx, "", synced...)
}

// IndexField adds the index to the endpoint's shared informer, once per endpoint.
func (c *Scoped) IndexField(ctx context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	if err := c.Serves(obj); err != nil {
		return err
	}
	if err := c.shared.indexField(ctx, obj, field, extract); err != nil {
		return err
	}
	inf, err := c.shared.SharedInformer(ctx, obj, crcache.BlockUntilSynced(false))
	if err != nil {
		return err
	}
	c.mu.Lock()
	if !slices.Contains(c.indexed, inf) {
		c.indexed = append(c.indexed, inf)
	}
	c.mu.Unlock()
	return nil
}

// scopedInformer is a shared informer of the endpoint seen through one logical cluster: its
// handlers are told about that cluster's objects only.
type scopedInformer struct {
	cache    *Scoped
	informer toolscache.SharedIndexInformer
}

var _ crcache.Informer = &scopedInformer{}

func (i *scopedInformer) AddEventHandler(handler toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.AddEventHandlerWithOptions(handler, toolscache.HandlerOptions{})
}

func (i *scopedInformer) AddEventHandlerWithResyncPeriod(handler toolscache.ResourceEventHandler, resyncPeriod time.Duration) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.AddEventHandlerWithOptions(handler, toolscache.HandlerOptions{ResyncPeriod: &resyncPeriod})
}

func (i *scopedInformer) AddEventHandlerWithOptions(handler toolscache.ResourceEventHandler, options toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	cluster := i.cache.cluster
	mine := func(obj any) bool {
		o, ok := kit.ObjectOf(obj)
		return ok && logicalcluster.From(o) == cluster
	}
	filtered := toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, isInInitialList bool) {
			if mine(obj) {
				handler.OnAdd(obj, isInInitialList)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			if mine(newObj) {
				handler.OnUpdate(oldObj, newObj)
			}
		},
		DeleteFunc: func(obj any) {
			if mine(obj) {
				handler.OnDelete(obj)
			}
		},
	}
	i.cache.mu.Lock()
	defer i.cache.mu.Unlock()
	if i.cache.stopped {
		return nil, fmt.Errorf("adding an event handler for logical cluster %q: %w", cluster, errDisengaged)
	}
	reg, err := i.informer.AddEventHandlerWithOptions(filtered, options)
	if err != nil {
		return nil, err
	}
	i.cache.handlers[reg] = i.informer
	return reg, nil
}

func (i *scopedInformer) RemoveEventHandler(reg toolscache.ResourceEventHandlerRegistration) error {
	i.cache.mu.Lock()
	delete(i.cache.handlers, reg)
	i.cache.mu.Unlock()
	return i.informer.RemoveEventHandler(reg)
}

// AddIndexers fails: indexes are added with IndexField, which adds them once per endpoint and
// keys them by logical cluster.
func (i *scopedInformer) AddIndexers(toolscache.Indexers) error {
	return errors.New("indexers cannot be added through a logical cluster's informer; use IndexField")
}

func (i *scopedInformer) HasSynced() bool { return i.informer.HasSynced() }

func (i *scopedInformer) HasSyncedChecker() toolscache.DoneChecker {
	return i.informer.HasSyncedChecker()
}

func (i *scopedInformer) IsStopped() bool { return i.informer.IsStopped() }
