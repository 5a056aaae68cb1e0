// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kubeconfig

import (
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
)

// Provider engages one cluster for every labeled kubeconfig Secret on a host cluster. Create it
// with New or NewForHost and hand it to the manager, which calls Start.
type Provider struct {
	// Members supplies Get, IndexField, ClusterNames, ListClusters and Start, which runs the
	// engine.
	kit.Members[types.NamespacedName]

	opts     Options
	host     cluster.Cluster
	selector labels.Selector
	engine   *kit.Engine[types.NamespacedName]
	// names reports the problems of a Secret's cluster name (a conflict, an empty name), which
	// belong to the Secret rather than to a member.
	names kit.Problems

	mu sync.Mutex
	// secrets is what the provider knows about each selected Secret; owners says which Secret
	// each cluster name belongs to.
	secrets map[types.NamespacedName]*secretState
	owners  map[multicluster.ClusterName]types.NamespacedName
}

// New returns a provider that watches kubeconfig Secrets on the host cluster that hostConfig
// points at. It builds its own host cluster whose cache holds only the labeled Secrets of the
// watched namespace, so the provider needs RBAC for nothing else (config/rbac.yaml), and Start runs
// it.
func New(hostConfig *rest.Config, opts Options) (*Provider, error) {
	o := opts.withDefaults()
	host, err := kit.NewHost(providerName, hostConfig, o.Logger, nil, func(co *cluster.Options) {
		byObject := cache.ByObject{Label: selector(o)}
		if !o.AllNamespaces {
			byObject.Namespaces = map[string]cache.Config{}
			for _, ns := range o.Namespaces {
				byObject.Namespaces[ns] = cache.Config{}
			}
		}
		co.Cache.ByObject = map[client.Object]cache.ByObject{&corev1.Secret{}: byObject}
	}, o.HostClusterOptions...)
	if err != nil {
		return nil, err
	}
	return newProvider(o, host)
}

// NewForHost returns a provider that reads Secrets through host's cache, for example the
// manager's own cluster (mgr.GetLocalManager()), to share one Secret informer with other
// controllers. host must be started by its owner; Start only adds an event handler to its Secret
// informer and removes it again when it returns. Events are recorded with host's recorder. Note
// that a default manager cache holds every Secret of the cluster, which needs list and watch on
// Secrets cluster-wide; restrict it with the manager's cache options (ByObject for Secrets) to
// what Options select.
func NewForHost(host cluster.Cluster, opts Options) (*Provider, error) {
	return newProvider(opts.withDefaults(), host)
}

// newProvider builds the provider and its engine on host from o, with its defaults applied.
func newProvider(o Options, host cluster.Cluster) (*Provider, error) {
	p := &Provider{
		opts:     o,
		host:     host,
		selector: selector(o),
		secrets:  map[types.NamespacedName]*secretState{},
		owners:   map[multicluster.ClusterName]types.NamespacedName{},
	}
	const subject = "Kubeconfig Secret"
	var err error
	p.engine, err = p.Init(kit.EngineOptions[types.NamespacedName]{Name: providerName, Options: o.Options, Host: host,
		Sync: p.sync, Sources: []kit.Source[types.NamespacedName]{p.source()}, Keys: p.secretKeys, Subject: subject})
	if err != nil {
		return nil, err
	}
	p.names = kit.Problems{Subject: subject, Errors: Errors, Record: p.engine.Record}
	return p, nil
}

// selector selects the Secrets labeled Options.SecretLabel=true.
func selector(o Options) labels.Selector {
	return labels.SelectorFromSet(labels.Set{o.SecretLabel: labelValue})
}

// source watches the host's Secret informer. The old object of an update counts too, so that a
// Secret that loses its label is synced (and disengaged).
func (p *Provider) source() kit.Source[types.NamespacedName] {
	return kit.HostObjects[types.NamespacedName]{
		Watches: []kit.Watch[types.NamespacedName]{{
			Object: &corev1.Secret{},
			Kind:   "Secrets",
			Keys: func(o client.Object) []types.NamespacedName {
				if !p.selects(o) {
					return nil
				}
				return []types.NamespacedName{{Namespace: o.GetNamespace(), Name: o.GetName()}}
			},
			KeysOfOld: true,
			SyncHint:  "does the provider have list and watch permission on Secrets in the watched namespace?",
		}},
	}
}

// selects reports whether o is a kubeconfig Secret this provider serves. The provider's own host
// cache holds only such Secrets, but a shared cache (NewForHost) holds all of them.
func (p *Provider) selects(o client.Object) bool {
	if !p.opts.AllNamespaces && !slices.Contains(p.opts.Namespaces, o.GetNamespace()) {
		return false
	}
	return p.selector.Matches(labels.Set(o.GetLabels()))
}
