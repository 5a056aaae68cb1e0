// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterapi

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/providers/kit"
)

// Provider engages one cluster for every ready Cluster API Cluster on a management (host)
// cluster. Create it with New or NewForHost and hand it to the manager, which calls Start.
type Provider struct {
	// Members supplies Get, IndexField, ClusterNames, ListClusters and Start, which runs the
	// engine.
	kit.Members[types.NamespacedName]

	opts   Options
	host   cluster.Cluster
	engine *kit.Engine[types.NamespacedName]
}

// New returns a provider that watches Cluster API Clusters on the management cluster hostConfig
// points at. It builds its own host cluster, which Start runs, with a cache that holds only the
// Clusters of Options.Namespaces and the Secrets there labeled cluster.x-k8s.io/cluster-name,
// keeping the data of kubeconfig Secrets only. It needs the RBAC of config/rbac.yaml and
// nothing else.
func New(hostConfig *rest.Config, opts Options) (*Provider, error) {
	o := opts.withDefaults()
	hasLabel, err := labels.NewRequirement(ClusterNameLabel, selection.Exists, nil)
	if err != nil {
		return nil, fmt.Errorf("clusterapi provider: %w", err)
	}
	host, err := kit.NewHost(providerName, hostConfig, o.Logger, hostTypes, func(co *cluster.Options) {
		co.Cache.DefaultNamespaces = kit.CacheNamespaces(o.Namespaces)
		co.Cache.ByObject = map[client.Object]cache.ByObject{
			&corev1.Secret{}: {
				Label:     labels.NewSelector().Add(*hasLabel),
				Transform: keepKubeconfigDataOnly,
			},
		}
	}, o.HostClusterOptions...)
	if err != nil {
		return nil, err
	}
	return newProvider(o, host)
}

// NewForHost returns a provider that reads Clusters and Secrets through host's cache, for
// example the manager's own cluster (mgr.GetLocalManager()), to share informers with other
// controllers. host must be started by its owner, and its scheme must hold the Cluster API type
// of Options.APIVersion (clusterv1.AddToScheme). Start only adds event handlers to host's
// informers and removes them when it returns. A default cache holds every Secret of the cluster
// with its data; restrict it with the owner's cache options (ByObject for Secrets, label
// cluster.x-k8s.io/cluster-name) to what the provider needs.
func NewForHost(host cluster.Cluster, opts Options) (*Provider, error) {
	return newProvider(opts.withDefaults(), host)
}

// newProvider builds the provider and its engine on host from o, with its defaults applied.
func newProvider(o Options, host cluster.Cluster) (*Provider, error) {
	if err := o.APIVersion.validate(); err != nil {
		return nil, fmt.Errorf("clusterapi provider: %w", err)
	}
	p := &Provider{opts: o, host: host}
	var err error
	p.engine, err = p.Init(kit.EngineOptions[types.NamespacedName]{Name: providerName, Options: o.Options, Host: host,
		Sync: p.sync, Sources: []kit.Source[types.NamespacedName]{p.source()}})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// keepKubeconfigDataOnly drops the data of every cached Secret but kubeconfig Secrets, so that
// the provider never holds the certificate authorities' keys Cluster API keeps next to them.
func keepKubeconfigDataOnly(obj any) (any, error) {
	if s, ok := obj.(*corev1.Secret); ok {
		if _, isKubeconfig := clusterOfSecret(s.Namespace, s.Name); !isKubeconfig {
			s.Data, s.StringData = nil, nil
		}
		s.ManagedFields = nil
	}
	return obj, nil
}

// source watches the host's Cluster and Secret informers; both map to the Cluster's key.
func (p *Provider) source() kit.Source[types.NamespacedName] {
	// A shared host cache (NewForHost) may hold namespaces the provider does not serve.
	inNamespaces := func(ns string) bool {
		return len(p.opts.Namespaces) == 0 || slices.Contains(p.opts.Namespaces, ns)
	}
	const crdHint = "are the Cluster API CRDs installed"
	informerHint := crdHint + ", and the type in the host's scheme?"
	syncHint := crdHint + ", and does the provider have list and watch permission?"
	return kit.HostObjects[types.NamespacedName]{
		Watches: []kit.Watch[types.NamespacedName]{{
			Object: p.opts.APIVersion.newObject(),
			Keys: func(o client.Object) []types.NamespacedName {
				if !inNamespaces(o.GetNamespace()) {
					return nil
				}
				return []types.NamespacedName{{Namespace: o.GetNamespace(), Name: o.GetName()}}
			},
			InformerHint: informerHint,
			SyncHint:     syncHint,
		}, {
			Object: &corev1.Secret{},
			Keys: func(o client.Object) []types.NamespacedName {
				if key, ok := clusterOfSecret(o.GetNamespace(), o.GetName()); ok && inNamespaces(key.Namespace) {
					return []types.NamespacedName{key}
				}
				return nil
			},
			InformerHint: informerHint,
			SyncHint:     syncHint,
		}},
	}
}
