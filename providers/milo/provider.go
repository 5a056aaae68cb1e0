// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package milo

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/kubeconfig"
	"mcr.dev/core/providers/kit"
	infrastructurev1alpha1 "mcr.dev/providers/milo/api/infrastructure/v1alpha1"
	resourcemanagerv1alpha1 "mcr.dev/providers/milo/api/resourcemanager/v1alpha1"
)

// Provider engages one cluster, named after the project, for every ready Milo project. Create
// it with New or NewForHost and hand it to the manager, which calls Start.
type Provider struct {
	// Members supplies Get, IndexField, ClusterNames, ListClusters and Start, which runs the
	// engine.
	kit.Members[string]

	opts   Options
	host   cluster.Cluster
	engine *kit.Engine[string]

	// unreadySince holds, for each engaged project in its grace period, when it was first
	// seen unready. Only the sync of a project touches its entry.
	mu           sync.Mutex
	unreadySince map[string]time.Time
}

// Scheme returns a new scheme with the client-go types and the Milo types the provider reads,
// the scheme of the host cluster New builds. A host cluster given to NewForHost needs the
// Milo type of its Mode in its scheme.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	sb := append(runtime.SchemeBuilder{clientgoscheme.AddToScheme}, hostTypes...)
	if err := sb.AddToScheme(s); err != nil {
		return nil, err
	}
	return s, nil
}

// hostTypes are the API types of the host cluster New builds besides client-go's: the Milo
// types of both modes.
var hostTypes = runtime.NewSchemeBuilder(resourcemanagerv1alpha1.AddToScheme, infrastructurev1alpha1.AddToScheme)

// New returns a provider that watches the Milo apiserver (ModeProject) or the infrastructure
// cluster (ModeProjectControlPlane) hostConfig points at. It builds its own host cluster, which
// Start runs, with a cache that holds only the objects of its Mode, without managed fields. It
// needs the RBAC of config/rbac.yaml and nothing else on the host.
func New(hostConfig *rest.Config, opts Options) (*Provider, error) {
	if hostConfig == nil {
		return nil, errors.New("milo provider: host config is nil")
	}
	if err := kubeconfig.CheckServerURL("the host config's Host", hostConfig.Host); err != nil {
		return nil, fmt.Errorf("milo provider: the Host of the host config is refused: %w", err)
	}
	o, err := opts.withDefaults(hostConfig)
	if err != nil {
		return nil, fmt.Errorf("milo provider: %w", err)
	}
	host, err := kit.NewHost(providerName, hostConfig, o.Logger, hostTypes, func(co *cluster.Options) {
		co.Cache.DefaultTransform = cache.TransformStripManagedFields()
	}, o.HostClusterOptions...)
	if err != nil {
		return nil, err
	}
	return newProvider(o, host)
}

// NewForHost returns a provider that reads Projects or ProjectControlPlanes through host's cache,
// for example the manager's own cluster (mgr.GetLocalManager()), to share informers with other
// controllers. host must be started by its owner and have the Milo type of Options.Mode in its
// scheme (see Scheme). Start only adds an event handler to host's informer and removes it when
// it returns.
func NewForHost(host cluster.Cluster, opts Options) (*Provider, error) {
	if host == nil {
		return nil, errors.New("milo provider: host cluster is nil")
	}
	o, err := opts.withDefaults(host.GetConfig())
	if err != nil {
		return nil, fmt.Errorf("milo provider: %w", err)
	}
	return newProvider(o, host)
}

// newProvider builds the provider and its engine from defaulted options.
func newProvider(o Options, host cluster.Cluster) (*Provider, error) {
	p := &Provider{opts: o, host: host, unreadySince: map[string]time.Time{}}
	shared := o.Options
	shared.Logger = o.Logger.WithValues("mode", string(o.Mode))
	var err error
	p.engine, err = p.Init(kit.EngineOptions[string]{Name: providerName, Options: shared, Host: host,
		Sync: p.sync, Sources: []kit.Source[string]{p.source()}, Subject: "Project",
		// Control planes are paths of one front door: a 404 means the project is not served.
		NotFoundMeansNotServed: true})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Mode returns the mode the provider runs in.
func (p *Provider) Mode() Mode { return p.opts.Mode }

// source watches the host's informer of the Mode's type; a project's key is its name.
func (p *Provider) source() kit.Source[string] {
	return kit.HostObjects[string]{
		Watches: []kit.Watch[string]{{
			Object:       p.opts.Mode.newObject(),
			Kind:         p.opts.Mode.kind(),
			Keys:         func(o client.Object) []string { return []string{o.GetName()} },
			InformerHint: "is the CRD installed, and the type in the host's scheme?",
			SyncHint:     "is the CRD installed, and does the provider have list and watch permission?",
		}},
	}
}
