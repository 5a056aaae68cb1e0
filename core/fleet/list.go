// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package fleet

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/multicluster"
	"mcr.dev/core/redact"
)

// InClusters restricts a Reader's List to the named clusters; names that are not engaged are
// left out, as always. Other readers ignore it.
type InClusters []multicluster.ClusterName

// ApplyToList does nothing: Reader.List reads InClusters from its options itself, since
// client.ListOptions has no field for it.
func (InClusters) ApplyToList(*client.ListOptions) {}

// Item is an object read across the fleet, with the cluster it was read from.
type Item[T client.Object] struct {
	Cluster multicluster.ClusterName
	Object  T
}

// List lists the objects of list's type of every engaged cluster into list, sorted by cluster,
// namespace and name. The items do not say which cluster they come from: ListItems and
// ListByCluster return the cluster with each object.
//
// It reads each cluster's cache (or API reader, with Options.UseAPIReader) once, at most
// Options.MaxConcurrency clusters at a time, each bounded by Options.ClusterTimeout. The first
// read of a type in a cluster starts the cache's informer of the type there, which then stays,
// as a first Get of a type does.
//
// Options are those of a client's List: a namespace, a label selector, a field selector (of
// exact matches on fields indexed with the manager's GetFieldIndexer when read from caches),
// Limit (of the whole list, after sorting), UnsafeDisableDeepCopy, and InClusters. Continue is
// refused: there is no continue token across clusters.
//
// A partial list is never silent: when some clusters cannot be read, list holds the objects of
// the others and the error is a *PartialError naming each failed cluster with its error (URLs
// redacted). Other errors leave list as it was.
func (r *Reader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	_, err := r.list(ctx, list, opts)
	return err
}

// ListItems lists as Reader.List does and returns the listed objects, in list's order, each with
// its cluster. T is the pointer type of list's items (*corev1.ConfigMap for a
// *corev1.ConfigMapList, *unstructured.Unstructured for an *unstructured.UnstructuredList), and
// the objects point into list. When List returns a *PartialError, so does ListItems, with the
// objects that were listed.
func ListItems[T client.Object](ctx context.Context, r *Reader, list client.ObjectList, opts ...client.ListOption) ([]Item[T], error) {
	clusters, listErr := r.list(ctx, list, opts)
	if _, partial := errors.AsType[*PartialError](listErr); listErr != nil && !partial {
		return nil, listErr
	}
	objs, err := apimeta.ExtractList(list)
	if err != nil {
		return nil, errors.Join(listErr, fmt.Errorf("fleet: %w", err))
	}
	items := make([]Item[T], len(objs))
	for i, obj := range objs {
		o, ok := obj.(T)
		if !ok {
			var want T
			return nil, errors.Join(listErr, fmt.Errorf("fleet: %T holds %T items, not %T", list, obj, want))
		}
		items[i] = Item[T]{Cluster: clusters[i], Object: o}
	}
	return items, listErr
}

// ListByCluster lists as Reader.List does and returns the listed objects by cluster, each
// cluster's sorted by namespace and name; clusters without objects are left out. T is as for
// ListItems. When List returns a *PartialError, so does ListByCluster, with the objects that
// were listed.
func ListByCluster[T client.Object](ctx context.Context, r *Reader, list client.ObjectList, opts ...client.ListOption) (map[multicluster.ClusterName][]T, error) {
	items, err := ListItems[T](ctx, r, list, opts...)
	if items == nil && err != nil {
		return nil, err
	}
	byCluster := map[multicluster.ClusterName][]T{}
	for _, item := range items {
		byCluster[item.Cluster] = append(byCluster[item.Cluster], item.Object)
	}
	return byCluster, err
}

// list lists into list through the backend and returns the cluster of each of its items: the
// clusters sorted by name, each cluster's objects by namespace and name, the whole cut at the
// options' Limit.
func (r *Reader) list(ctx context.Context, list client.ObjectList, opts []client.ListOption) ([]multicluster.ClusterName, error) {
	o := client.ListOptions{}
	o.ApplyOptions(opts)
	if o.Continue != "" {
		return nil, errors.New("fleet: the continue list option is not supported across clusters")
	}
	// The limit is of the whole sorted list: each cluster's share of it is unknown.
	limit := o.Limit
	o.Limit = 0
	if _, err := newListLike(list); err != nil {
		return nil, err
	}
	listed, err := r.backend.List(ctx, list, &o, inClusters(opts))
	if err != nil {
		return nil, err
	}

	var clusters []multicluster.ClusterName
	var items []runtime.Object
	for _, name := range slices.Sorted(maps.Keys(listed.Objects)) {
		objs := listed.Objects[name]
		slices.SortFunc(objs, func(a, b client.Object) int {
			return cmp.Or(strings.Compare(a.GetNamespace(), b.GetNamespace()), strings.Compare(a.GetName(), b.GetName()))
		})
		for _, obj := range objs {
			if limit > 0 && int64(len(items)) == limit {
				break
			}
			clusters = append(clusters, name)
			items = append(items, obj)
		}
	}
	if err := apimeta.SetList(list, items); err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	if len(listed.Failed) > 0 {
		return clusters, &PartialError{Action: "listing " + describe(list), Errors: listed.Failed, Clusters: len(listed.Objects) + len(listed.Failed)}
	}
	return clusters, nil
}

// List is the clusterReader's Backend.List: each engaged cluster read once, at most
// Options.MaxConcurrency at a time, each bounded by Options.ClusterTimeout.
func (r *clusterReader) List(ctx context.Context, list client.ObjectList, o *client.ListOptions, only map[multicluster.ClusterName]bool) (Listed, error) {
	members := r.engaged(only)
	objs := make([][]client.Object, len(members))
	failed := r.forEach(members, func(i int, m *member) error {
		var err error
		objs[i], err = answer(ctx, r, func(ctx context.Context) ([]client.Object, error) {
			return r.read(ctx, m, list, o)
		})
		return redact.Error(err)
	})
	listed := Listed{Objects: map[multicluster.ClusterName][]client.Object{}, Failed: failed}
	for i, m := range members {
		if _, bad := failed[m.name]; !bad {
			listed.Objects[m.name] = objs[i]
		}
	}
	return listed, nil
}

// read lists the objects of one cluster.
func (r *clusterReader) read(ctx context.Context, m *member, list client.ObjectList, o *client.ListOptions) ([]client.Object, error) {
	into, err := newListLike(list)
	if err != nil {
		return nil, err
	}
	if r.opts.UseAPIReader {
		err = m.cluster.GetAPIReader().List(ctx, into, o)
	} else {
		var probe chan error
		if r.opts.CheckReachable {
			probe = make(chan error, 1)
			go func() { probe <- r.probe(ctx, m, list, o.Namespace) }()
		}
		err = m.cluster.GetCache().List(ctx, into, o)
		if probe != nil {
			// The cache's answer may be stale; the API server's decides.
			if probeErr := <-probe; probeErr != nil {
				return nil, fmt.Errorf("the API server does not answer: %w", probeErr)
			}
		}
	}
	if err != nil {
		return nil, err
	}
	items, err := apimeta.ExtractList(into)
	if err != nil {
		return nil, err
	}
	objs := make([]client.Object, len(items))
	for i, item := range items {
		obj, ok := item.(client.Object)
		if !ok {
			return nil, fmt.Errorf("%T holds %T items, which are not Objects", list, item)
		}
		objs[i] = obj
	}
	return objs, nil
}

// probe asks the cluster's API server for one object of list's type in namespace.
func (r *clusterReader) probe(ctx context.Context, m *member, list client.ObjectList, namespace string) error {
	into, err := newListLike(list)
	if err != nil {
		return err
	}
	return m.cluster.GetAPIReader().List(ctx, into, client.InNamespace(namespace), client.Limit(1))
}

// newListLike returns an empty list of list's type and kind.
func newListLike(list client.ObjectList) (client.ObjectList, error) {
	t := reflect.TypeOf(list)
	if t == nil || t.Kind() != reflect.Pointer {
		return nil, fmt.Errorf("fleet: %T is not a pointer to a list", list)
	}
	into, ok := reflect.New(t.Elem()).Interface().(client.ObjectList)
	if !ok {
		return nil, fmt.Errorf("fleet: a new %T is not an ObjectList", list)
	}
	// Unstructured and metadata-only lists say what they list only in their kind.
	into.GetObjectKind().SetGroupVersionKind(list.GetObjectKind().GroupVersionKind())
	return into, nil
}

// inClusters returns the clusters InClusters options name, or nil without one.
func inClusters(opts []client.ListOption) map[multicluster.ClusterName]bool {
	var only map[multicluster.ClusterName]bool
	for _, opt := range opts {
		if names, ok := opt.(InClusters); ok {
			if only == nil {
				only = map[multicluster.ClusterName]bool{}
			}
			for _, name := range names {
				only[name] = true
			}
		}
	}
	return only
}

// describe names obj's type for errors: its kind when it has one (unstructured objects),
// otherwise its Go type.
func describe(obj runtime.Object) string {
	if gvk := obj.GetObjectKind().GroupVersionKind(); gvk.Kind != "" {
		return gvk.Kind
	}
	return fmt.Sprintf("%T", obj)
}
