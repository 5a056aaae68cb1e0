// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package namespace

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// reader reads through the namespace mapping; it serves the client, the cache and the API
// reader of a namespace-cluster.
type reader struct {
	scope *scope
	host  client.Reader
}

func (r *reader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	namespaced, err := r.scope.isNamespaced(obj)
	if err != nil {
		return err
	}
	if !namespaced {
		return r.host.Get(ctx, key, obj, opts...)
	}
	host, ok := r.scope.toHost(key.Namespace)
	if !ok {
		return r.scope.notFound(obj, key.Name)
	}
	key.Namespace = host
	if err := r.host.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	obj.SetNamespace(InnerNamespace)
	return nil
}

func (r *reader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	namespaced, err := r.scope.isNamespacedList(list)
	if err != nil {
		return err
	}
	if !namespaced {
		return r.host.List(ctx, list, opts...)
	}
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	host, ok := r.scope.toHost(lo.Namespace)
	if !ok {
		return meta.SetList(list, nil) // another namespace: nothing there
	}
	lo.Namespace = host
	if lo.FieldSelector, err = r.scope.rewriteFieldSelector(lo.FieldSelector); err != nil {
		return err
	}
	// Items are rewritten below, so they must not alias the shared cache.
	lo.UnsafeDisableDeepCopy = nil
	if err := r.host.List(ctx, list, lo); err != nil {
		return err
	}
	return meta.EachListItem(list, func(item runtime.Object) error {
		a, err := meta.Accessor(item)
		if err != nil {
			return err
		}
		a.SetNamespace(InnerNamespace)
		return nil
	})
}

// namespacedClient is the client of a namespace-cluster.
type namespacedClient struct {
	reader
	host client.Client
}

var _ client.Client = &namespacedClient{}

func newClient(s *scope, host client.Client) *namespacedClient {
	return &namespacedClient{reader: reader{scope: s, host: host}, host: host}
}

func (c *namespacedClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	return c.scope.inHost(obj, func() error { return c.host.Create(ctx, obj, opts...) })
}

func (c *namespacedClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	return c.scope.inHost(obj, func() error { return c.host.Update(ctx, obj, opts...) })
}

func (c *namespacedClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	return c.scope.inHost(obj, func() error { return c.host.Patch(ctx, obj, patch, opts...) })
}

func (c *namespacedClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	return c.scope.inHost(obj, func() error { return c.host.Delete(ctx, obj, opts...) })
}

func (c *namespacedClient) DeleteAllOf(ctx context.Context, obj client.Object, opts ...client.DeleteAllOfOption) error {
	namespaced, err := c.scope.isNamespaced(obj)
	if err != nil {
		return err
	}
	if !namespaced {
		return c.host.DeleteAllOf(ctx, obj, opts...)
	}
	do := (&client.DeleteAllOfOptions{}).ApplyOptions(opts)
	host, ok := c.scope.toHost(do.Namespace)
	if !ok {
		return c.scope.outsideError(do.Namespace)
	}
	do.Namespace = host
	if do.FieldSelector, err = c.scope.rewriteFieldSelector(do.FieldSelector); err != nil {
		return err
	}
	return c.host.DeleteAllOf(ctx, obj, do)
}

func (c *namespacedClient) Apply(ctx context.Context, ac runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	return c.scope.applyInHost(ac, func(hostAC runtime.ApplyConfiguration) error {
		return c.host.Apply(ctx, hostAC, opts...)
	})
}

func (c *namespacedClient) Status() client.SubResourceWriter { return c.SubResource("status") }

func (c *namespacedClient) SubResource(subResource string) client.SubResourceClient {
	return &subResourceClient{scope: c.scope, host: c.host.SubResource(subResource)}
}

func (c *namespacedClient) Scheme() *runtime.Scheme { return c.host.Scheme() }

func (c *namespacedClient) RESTMapper() meta.RESTMapper { return c.host.RESTMapper() }

func (c *namespacedClient) GroupVersionKindFor(obj runtime.Object) (schema.GroupVersionKind, error) {
	return c.host.GroupVersionKindFor(obj)
}

func (c *namespacedClient) IsObjectNamespaced(obj runtime.Object) (bool, error) {
	return c.host.IsObjectNamespaced(obj)
}

// subResourceClient maps the parent object, and a subresource body in the inner namespace.
type subResourceClient struct {
	scope *scope
	host  client.SubResourceClient
}

func (c *subResourceClient) Get(ctx context.Context, obj, subResource client.Object, opts ...client.SubResourceGetOption) error {
	return c.scope.inHost(obj, func() error {
		if err := c.host.Get(ctx, obj, subResource, opts...); err != nil {
			return err
		}
		c.scope.showInner(subResource)
		return nil
	})
}

func (c *subResourceClient) Create(ctx context.Context, obj, subResource client.Object, opts ...client.SubResourceCreateOption) error {
	return c.scope.inHost(obj, func() error {
		restore := c.scope.moveToHost(subResource)
		defer restore()
		return c.host.Create(ctx, obj, subResource, opts...)
	})
}

func (c *subResourceClient) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	uo := (&client.SubResourceUpdateOptions{}).ApplyOptions(opts)
	return c.scope.inHost(obj, func() error {
		restore := c.scope.moveToHost(uo.SubResourceBody)
		defer restore()
		return c.host.Update(ctx, obj, uo)
	})
}

func (c *subResourceClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	po := (&client.SubResourcePatchOptions{}).ApplyOptions(opts)
	return c.scope.inHost(obj, func() error {
		restore := c.scope.moveToHost(po.SubResourceBody)
		defer restore()
		return c.host.Patch(ctx, obj, patch, po)
	})
}

func (c *subResourceClient) Apply(ctx context.Context, ac runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
	return c.scope.applyInHost(ac, func(hostAC runtime.ApplyConfiguration) error {
		return c.host.Apply(ctx, hostAC, opts...)
	})
}

// moveToHost moves a subresource body in the inner namespace to the host namespace and returns
// the function that shows it in the inner namespace again.
func (s *scope) moveToHost(obj client.Object) (restore func()) {
	if obj == nil || obj.GetNamespace() != InnerNamespace {
		return func() {}
	}
	obj.SetNamespace(s.namespace)
	return func() { obj.SetNamespace(InnerNamespace) }
}

// showInner shows an object returned from the host namespace in the inner namespace.
func (s *scope) showInner(obj client.Object) {
	if obj != nil && obj.GetNamespace() == s.namespace {
		obj.SetNamespace(InnerNamespace)
	}
}

// applyInHost applies an apply configuration in the host namespace. Apply configurations have no
// common setter, so the configuration goes through its JSON form, as it does on the wire, and
// the server's answer is decoded back into it, as controller-runtime's client does.
func (s *scope) applyInHost(ac runtime.ApplyConfiguration, apply func(runtime.ApplyConfiguration) error) error {
	raw, err := json.Marshal(ac)
	if err != nil {
		return fmt.Errorf("encoding apply configuration: %w", err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		return fmt.Errorf("decoding apply configuration: %w", err)
	}
	namespaced, err := s.isNamespacedKind(u.GroupVersionKind())
	if err != nil {
		return err
	}
	if namespaced {
		host, ok := s.toHost(u.GetNamespace())
		if !ok {
			return s.outsideError(u.GetNamespace())
		}
		u.SetNamespace(host)
	}
	if err := apply(client.ApplyConfigurationFromUnstructured(u)); err != nil {
		return err
	}
	if namespaced {
		u.SetNamespace(InnerNamespace)
	}
	answer, err := u.MarshalJSON()
	if err != nil {
		return err
	}
	return json.Unmarshal(answer, ac)
}
