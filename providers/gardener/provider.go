// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package gardener

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	authenticationv1alpha1 "github.com/gardener/gardener/pkg/apis/authentication/v1alpha1"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"mcr.dev/core/providers/kit"
)

// Provider engages one cluster for every usable Shoot of a garden cluster, or for every shoot
// control plane of a seed cluster (Options.Topology). Create it with New or NewForHost and hand
// it to the manager, which calls Start.
type Provider struct {
	// Members supplies Get, IndexField, ClusterNames, ListClusters and Start, which runs the
	// engine.
	kit.Members[types.NamespacedName]

	opts   Options
	host   cluster.Cluster
	engine *kit.Engine[types.NamespacedName]
	// creds holds the admin credentials of each Shoot (TopologyGarden). Only the sync of a
	// Shoot touches its entry.
	mu    sync.Mutex
	creds map[types.NamespacedName]*shootCredentials
}

// New returns a provider that watches the garden or seed cluster hostConfig points at
// (Options.Topology). It builds its own host cluster, which Start runs, with a cache that holds
// only what the provider reads: Shoots of Options.Namespaces (garden), or Cluster objects and
// the Secrets named "gardener" (seed, keeping only their kubeconfig). It needs the RBAC of
// config/rbac-garden.yaml or config/rbac-seed.yaml and nothing else.
func New(hostConfig *rest.Config, opts Options) (*Provider, error) {
	if hostConfig == nil {
		return nil, errors.New("gardener provider: host config is nil")
	}
	o := opts.withDefaults()
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("gardener provider: %w", err)
	}

	host, err := kit.NewHost(providerName, hostConfig, o.Logger, hostTypes, func(co *cluster.Options) {
		switch o.Topology {
		case TopologyGarden:
			co.Cache.DefaultNamespaces = kit.CacheNamespaces(o.Namespaces)
			co.Cache.ByObject = map[client.Object]cache.ByObject{
				&gardencorev1beta1.Shoot{}: {Transform: cache.TransformStripManagedFields()},
			}
		case TopologySeed:
			co.Cache.ByObject = map[client.Object]cache.ByObject{
				&extensionsv1alpha1.Cluster{}: {Transform: cache.TransformStripManagedFields()},
				&corev1.Secret{}: {
					Field:     fields.OneTermEqualSelector("metadata.name", SeedSecretName),
					Transform: keepKubeconfigOnly,
				},
			}
		}
	}, o.HostClusterOptions...)
	if err != nil {
		return nil, err
	}
	return newProvider(o, host)
}

// NewForHost returns a provider that watches the garden or seed cluster through host, a cluster
// the caller runs, for example the manager's own (mgr.GetLocalManager()), to share its
// informers and client with other controllers. Start does not start host: it waits, at most
// Options.CacheSyncTimeout, for host's informers, adds its event handlers to them and removes
// them when it returns. Options.HostClusterOptions are not used.
//
// host's scheme must hold the types of Options.Topology, or NewForHost fails: for
// TopologyGarden the Shoot (gardencorev1beta1.AddToScheme) and the AdminKubeconfigRequest
// (authenticationv1alpha1.AddToScheme), which the provider POSTs to shoots/adminkubeconfig with
// host's client and REST config; for TopologySeed the extensions Cluster
// (extensionsv1alpha1.AddToScheme) and Secrets (client-go's scheme). host's identity needs the
// RBAC of config/rbac-<topology>.yaml. Its cache is the caller's: in the seed, a default cache holds every Secret
// of the cluster with its data, so restrict it (cache.Options.ByObject for Secrets, field
// metadata.name=gardener) to what the provider needs; in the garden, it may hold namespaces
// beyond Options.Namespaces, whose Shoots the provider ignores.
func NewForHost(host cluster.Cluster, opts Options) (*Provider, error) {
	o := opts.withDefaults()
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("gardener provider: %w", err)
	}
	p, err := newProvider(o, host)
	if err != nil {
		return nil, err
	}
	if err := checkHostScheme(host.GetScheme(), o.Topology); err != nil {
		return nil, err
	}
	return p, nil
}

// newProvider builds the provider and its engine on host from o, validated and with its
// defaults applied.
func newProvider(o Options, host cluster.Cluster) (*Provider, error) {
	p := &Provider{
		opts:  o,
		host:  host,
		creds: map[types.NamespacedName]*shootCredentials{},
	}
	shared := o.Options
	shared.Logger = o.Logger.WithValues("topology", string(o.Topology))
	syncKey := p.syncShoot
	if o.Topology == TopologySeed {
		syncKey = p.syncSeedCluster
	}
	var err error
	p.engine, err = p.Init(kit.EngineOptions[types.NamespacedName]{Name: providerName, Options: shared, Host: host,
		Sync: syncKey, Sources: []kit.Source[types.NamespacedName]{p.source()}})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// hostTypes are the API types of the host cluster New builds besides client-go's: those of both
// topologies.
var hostTypes = runtime.NewSchemeBuilder(gardencorev1beta1.AddToScheme, authenticationv1alpha1.AddToScheme, extensionsv1alpha1.AddToScheme)

// checkHostScheme fails, naming the missing types and how to add them, when scheme lacks a type
// the topology reads or sends: otherwise Start, or the adminkubeconfig requests, would fail
// later with a less helpful message.
func checkHostScheme(scheme *runtime.Scheme, topology Topology) error {
	type need struct {
		obj runtime.Object
		add string
	}
	var needs []need
	switch topology {
	case TopologyGarden:
		needs = []need{
			{&gardencorev1beta1.Shoot{}, "gardencorev1beta1.AddToScheme"},
			{&authenticationv1alpha1.AdminKubeconfigRequest{}, "authenticationv1alpha1.AddToScheme"},
		}
	case TopologySeed:
		needs = []need{
			{&extensionsv1alpha1.Cluster{}, "extensionsv1alpha1.AddToScheme"},
			{&corev1.Secret{}, "clientgoscheme.AddToScheme"},
		}
	}
	var missing []string
	for _, n := range needs {
		if scheme == nil || !isRegistered(scheme, n.obj) {
			missing = append(missing, fmt.Sprintf("%T (%s)", n.obj, n.add))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("gardener provider: the host cluster's scheme lacks types of topology %q: %s", topology, strings.Join(missing, ", "))
	}
	return nil
}

func isRegistered(scheme *runtime.Scheme, obj runtime.Object) bool {
	_, _, err := scheme.ObjectKinds(obj)
	return err == nil
}

// keepKubeconfigOnly drops everything of a cached "gardener" Secret but its kubeconfig (the
// Secret also holds the bare token).
func keepKubeconfigOnly(obj any) (any, error) {
	if s, ok := obj.(*corev1.Secret); ok {
		kc, has := s.Data[SeedKubeconfigKey]
		s.Data, s.StringData = nil, nil
		if has {
			s.Data = map[string][]byte{SeedKubeconfigKey: kc}
		}
		s.ManagedFields = nil
	}
	return obj, nil
}

// Topology returns the topology the provider runs in.
func (p *Provider) Topology() Topology { return p.opts.Topology }

// source watches the host's informers: Shoots (garden), or Cluster objects and the "gardener"
// Secrets in their namespaces (seed).
func (p *Provider) source() kit.Source[types.NamespacedName] {
	key := func(o client.Object) []types.NamespacedName {
		return []types.NamespacedName{{Namespace: o.GetNamespace(), Name: o.GetName()}}
	}
	var watches []kit.Watch[types.NamespacedName]
	switch p.opts.Topology {
	case TopologyGarden:
		const hint = "is this a garden cluster, and may the provider list and watch shoots.core.gardener.cloud?"
		watches = []kit.Watch[types.NamespacedName]{{
			Object: &gardencorev1beta1.Shoot{},
			Keys: func(o client.Object) []types.NamespacedName {
				if !p.inNamespaces(o.GetNamespace()) {
					return nil
				}
				return key(o)
			},
			InformerHint: hint,
			SyncHint:     hint,
		}}
	case TopologySeed:
		const clusterHint = "is this a seed cluster with the clusters.extensions.gardener.cloud CRD, and may the provider list and watch them?"
		const secretHint = "may the provider list and watch Secrets?"
		watches = []kit.Watch[types.NamespacedName]{{
			Object:       &extensionsv1alpha1.Cluster{},
			Keys:         key,
			InformerHint: clusterHint,
			SyncHint:     clusterHint,
		}, {
			// The Secret's namespace is the name of its Cluster object.
			Object: &corev1.Secret{},
			Keys: func(o client.Object) []types.NamespacedName {
				if o.GetName() != SeedSecretName {
					return nil
				}
				return []types.NamespacedName{{Name: o.GetNamespace()}}
			},
			InformerHint: secretHint,
			SyncHint:     secretHint,
		}}
	}
	return kit.HostObjects[types.NamespacedName]{Watches: watches}
}

// inNamespaces reports whether Options.Namespaces selects the garden namespace ns.
func (p *Provider) inNamespaces(ns string) bool {
	return len(p.opts.Namespaces) == 0 || slices.Contains(p.opts.Namespaces, ns)
}
