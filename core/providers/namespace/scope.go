// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package namespace

import (
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
)

// InnerNamespace is the namespace in which a namespace-cluster shows the objects of its host
// namespace.
const InnerNamespace = metav1.NamespaceDefault

// scope maps between a namespace-cluster's view and its host namespace.
type scope struct {
	host      cluster.Cluster
	namespace string // the real namespace on the host
}

// toHost maps a namespace as seen inside the cluster to the host namespace. Only the inner
// namespace, or none, exists inside.
func (s *scope) toHost(ns string) (string, bool) {
	if ns == "" || ns == InnerNamespace {
		return s.namespace, true
	}
	return "", false
}

func (s *scope) isNamespaced(obj runtime.Object) (bool, error) {
	return apiutil.IsObjectNamespaced(obj, s.host.GetScheme(), s.host.GetRESTMapper())
}

// isNamespacedList reports whether the items of list are namespaced.
func (s *scope) isNamespacedList(list client.ObjectList) (bool, error) {
	gvk, err := apiutil.GVKForObject(list, s.host.GetScheme())
	if err != nil {
		return false, err
	}
	gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	return s.isNamespacedKind(gvk)
}

func (s *scope) isNamespacedKind(gvk schema.GroupVersionKind) (bool, error) {
	mapping, err := s.host.GetRESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return false, err
	}
	return mapping.Scope.Name() == meta.RESTScopeNameNamespace, nil
}

// notFound is the error for an object outside the inner namespace.
func (s *scope) notFound(obj runtime.Object, name string) error {
	gr := schema.GroupResource{Resource: "objects"}
	if gvk, err := apiutil.GVKForObject(obj, s.host.GetScheme()); err == nil {
		if mapping, err := s.host.GetRESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
			gr = mapping.Resource.GroupResource()
		}
	}
	return apierrors.NewNotFound(gr, name)
}

func (s *scope) outsideError(ns string) error {
	return apierrors.NewBadRequest(fmt.Sprintf("namespace-cluster %q has only the namespace %q, not %q", s.namespace, InnerNamespace, ns))
}

// rewriteFieldSelector maps a metadata.namespace requirement on the inner namespace to the host
// namespace; other requirements pass unchanged.
func (s *scope) rewriteFieldSelector(sel fields.Selector) (fields.Selector, error) {
	if sel == nil {
		return nil, nil
	}
	return sel.Transform(func(field, value string) (string, string, error) {
		if field == "metadata.namespace" {
			if host, ok := s.toHost(value); ok {
				return field, host, nil
			}
		}
		return field, value, nil
	})
}

// inHost runs write with obj moved to the host namespace, and shows obj in the inner namespace
// afterwards (or restores it on error). Cluster-scoped objects pass unchanged.
func (s *scope) inHost(obj client.Object, write func() error) error {
	namespaced, err := s.isNamespaced(obj)
	if err != nil {
		return err
	}
	if !namespaced {
		return write()
	}
	inner := obj.GetNamespace()
	host, ok := s.toHost(inner)
	if !ok {
		return s.outsideError(inner)
	}
	obj.SetNamespace(host)
	if err := write(); err != nil {
		obj.SetNamespace(inner)
		return err
	}
	obj.SetNamespace(InnerNamespace)
	return nil
}

// hostObject returns a copy of obj in the host namespace if obj is in the inner namespace,
// otherwise obj itself. The copy keeps the caller's object untouched.
func (s *scope) hostObject(obj runtime.Object) runtime.Object {
	if obj == nil {
		return nil
	}
	accessor, err := meta.Accessor(obj)
	if err != nil || accessor.GetNamespace() != InnerNamespace {
		return obj
	}
	cp := obj.DeepCopyObject()
	if a, err := meta.Accessor(cp); err == nil {
		a.SetNamespace(s.namespace)
	}
	return cp
}
