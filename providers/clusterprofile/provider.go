// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterprofile

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"mcr.dev/core/providers/kit"
)

// Provider engages one cluster for every ready ClusterProfile on a hub (host) cluster. Create it
// with New or NewForHost and hand it to the manager, which calls Start.
type Provider struct {
	// Members supplies Get, IndexField, ClusterNames, ListClusters and Start, which runs the
	// engine.
	kit.Members[types.NamespacedName]

	opts   Options
	host   cluster.Cluster
	engine *kit.Engine[types.NamespacedName]

	// placementSelector selects the PlacementDecision slices of Options.Placement; nil without.
	placementSelector labels.Selector

	mu       sync.Mutex
	profiles map[types.NamespacedName]*profileState
}

// profileState is what the provider remembers about one ClusterProfile beyond what the engine
// does. Only the sync of that profile changes it; identity and unreadySince, which Identity and
// Start read, and the map holding it are guarded by Provider.mu.
type profileState struct {
	// identity is the identity of the engaged cluster; nil while none is engaged.
	identity *Identity
	// unreadySince is when the provider saw the engaged profile become unready; zero while it
	// is ready or not engaged.
	unreadySince time.Time
	// deprecatedWarned is the access provider of status.credentialProviders that was warned
	// about.
	deprecatedWarned string
}

// New returns a provider that watches ClusterProfiles on the hub cluster hostConfig points at.
// It builds its own host cluster, which Start runs, with a cache that holds only the
// ClusterProfiles of Options.Namespaces and, with the Secret strategy, the Secrets there
// labeled for Options.Secret.ConsumerName. It needs the RBAC of config/rbac.yaml and nothing else.
func New(hostConfig *rest.Config, opts Options) (*Provider, error) {
	if hostConfig == nil {
		return nil, errors.New("clusterprofile provider: host config is nil")
	}
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("clusterprofile provider: %w", err)
	}
	o := opts.withDefaults()

	host, err := kit.NewHost(providerName, hostConfig, o.Logger, runtime.NewSchemeBuilder(v1alpha1.AddToScheme), func(co *cluster.Options) {
		co.Cache.DefaultNamespaces = kit.CacheNamespaces(o.Namespaces)
		co.Cache.ByObject = map[client.Object]cache.ByObject{}
		if o.Secret != nil {
			co.Cache.ByObject[&corev1.Secret{}] = cache.ByObject{
				Label:     labels.SelectorFromSet(labels.Set{SecretLabelConsumer: o.Secret.ConsumerName}),
				Transform: cache.TransformStripManagedFields(),
			}
		}
		if pl := o.Placement; pl != nil {
			// Only the selected slices; validate has checked the selector.
			sel, _ := pl.selector()
			byObject := cache.ByObject{Label: sel, Transform: cache.TransformStripManagedFields()}
			if pl.Namespace != "" {
				byObject.Namespaces = map[string]cache.Config{pl.Namespace: {}}
			}
			co.Cache.ByObject[&v1alpha1.PlacementDecision{}] = byObject
		}
	}, o.HostClusterOptions...)
	if err != nil {
		return nil, err
	}
	return newProvider(o, host)
}

// NewForHost returns a provider that reads ClusterProfiles (and, with the Secret strategy,
// kubeconfig Secrets) through host's cache, for example the manager's own cluster
// (mgr.GetLocalManager()), to share informers with other controllers. host must be started by
// its owner; Start waits for its cache, at most Options.CacheSyncTimeout, never starts or stops
// it, and only adds event handlers to its informers, which it removes when it returns.
// Options.HostClusterOptions are not used.
//
// host's scheme must hold the ClusterProfile type (v1alpha1.AddToScheme) and, with the Secret
// strategy, Secrets (clientgoscheme.AddToScheme); NewForHost fails otherwise. Options.Namespaces
// still selects the profiles the provider serves, but host's cache holds what its owner
// configured: a default cache holds every ClusterProfile and, with the Secret strategy, every
// Secret of the cluster with its data; restrict it with the owner's cache options
// (DefaultNamespaces, and ByObject for Secrets with the label
// x-k8s.io/cluster-inventory-consumer=<ConsumerName>) to what the provider needs.
func NewForHost(host cluster.Cluster, opts Options) (*Provider, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("clusterprofile provider: %w", err)
	}
	p, err := newProvider(opts.withDefaults(), host)
	if err != nil {
		return nil, err
	}
	if err := checkHostScheme(host.GetScheme(), opts.Secret != nil, opts.Placement != nil); err != nil {
		return nil, fmt.Errorf("clusterprofile provider: %w", err)
	}
	return p, nil
}

// newProvider builds the provider and its engine on host from o, validated and with its
// defaults applied: the part New and NewForHost share.
func newProvider(o Options, host cluster.Cluster) (*Provider, error) {
	if o.AccessProviders != nil {
		o.AccessProviders = copyProviderConfig(o.AccessProviders)
	}
	o.Namespaces = slices.Clone(o.Namespaces)
	p := &Provider{opts: o, host: host, profiles: map[types.NamespacedName]*profileState{}}
	sync, sources := p.sync, []kit.Source[types.NamespacedName]{p.source()}
	if o.Placement != nil {
		pl := *o.Placement
		o.Placement, p.opts.Placement = &pl, &pl
		sel, err := pl.selector()
		if err != nil {
			return nil, fmt.Errorf("clusterprofile provider: %w", err)
		}
		p.placementSelector = sel
		// The slices first, so that the profiles' first syncs see where they are placed.
		sync, sources = p.syncPlaced, append([]kit.Source[types.NamespacedName]{p.placementSource()}, sources...)
	}
	var err error
	p.engine, err = p.Init(kit.EngineOptions[types.NamespacedName]{Name: providerName, Options: o.Options, Host: host,
		Sync: sync, Sources: sources, Stopped: p.forgetProfiles})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// checkHostScheme reports the types the provider reads that a caller's host scheme lacks, so
// that NewForHost fails at once instead of Start failing on an informer it cannot create.
func checkHostScheme(s *runtime.Scheme, secrets, placement bool) error {
	if s == nil {
		return errors.New("the host cluster has no scheme")
	}
	var errs []error
	if gvk := v1alpha1.SchemeGroupVersion.WithKind("ClusterProfile"); !s.Recognizes(gvk) {
		errs = append(errs, fmt.Errorf("the host cluster's scheme lacks %s; add it with v1alpha1.AddToScheme (sigs.k8s.io/cluster-inventory-api/apis/v1alpha1)", gvk))
	}
	if gvk := corev1.SchemeGroupVersion.WithKind("Secret"); secrets && !s.Recognizes(gvk) {
		errs = append(errs, fmt.Errorf("the host cluster's scheme lacks %s, which the Secret strategy reads; add it with clientgoscheme.AddToScheme (k8s.io/client-go/kubernetes/scheme)", gvk))
	}
	if gvk := v1alpha1.SchemeGroupVersion.WithKind("PlacementDecision"); placement && !s.Recognizes(gvk) {
		errs = append(errs, fmt.Errorf("the host cluster's scheme lacks %s, which Options.Placement reads; add it with v1alpha1.AddToScheme (sigs.k8s.io/cluster-inventory-api/apis/v1alpha1)", gvk))
	}
	return errors.Join(errs...)
}

// forgetProfiles drops what the provider kept about profiles once the engine has disengaged
// every cluster.
func (p *Provider) forgetProfiles() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, st := range p.profiles {
		if !st.unreadySince.IsZero() {
			UnreadyEngagedClusters.Dec()
		}
	}
	p.profiles = map[types.NamespacedName]*profileState{}
}

// source watches the host's ClusterProfile (and Secret) informers; both map to the profile's
// key.
func (p *Provider) source() kit.Source[types.NamespacedName] {
	const informerHint = "is the ClusterProfile CRD installed?"
	const syncHint = "is the ClusterProfile CRD installed, and does the provider have list and watch permission?"
	watches := []kit.Watch[types.NamespacedName]{{
		Object: &v1alpha1.ClusterProfile{},
		Keys: func(o client.Object) []types.NamespacedName {
			if !p.inNamespaces(o.GetNamespace()) {
				return nil
			}
			return []types.NamespacedName{{Namespace: o.GetNamespace(), Name: o.GetName()}}
		},
		KeysOfOld:    true,
		InformerHint: informerHint,
		SyncHint:     syncHint,
	}}
	if p.opts.Secret != nil {
		watches = append(watches, kit.Watch[types.NamespacedName]{
			Object: &corev1.Secret{},
			Keys: func(o client.Object) []types.NamespacedName {
				name := o.GetLabels()[SecretLabelProfile]
				if name == "" || !p.inNamespaces(o.GetNamespace()) {
					return nil
				}
				return []types.NamespacedName{{Namespace: o.GetNamespace(), Name: name}}
			},
			// A Secret whose profile label changed concerns both profiles.
			KeysOfOld:    true,
			InformerHint: informerHint,
			SyncHint:     syncHint,
		})
	}
	return kit.HostObjects[types.NamespacedName]{Watches: watches}
}
