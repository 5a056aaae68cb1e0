// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kcp

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/kcp-dev/logicalcluster/v3"
	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"

	"mcr.dev/core/kubeconfig"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"

	fleetreads "mcr.dev/providers/kcp/internal/fleet"
)

// Provider engages every logical cluster of a kcp virtual workspace, for example the workspaces
// that bind an APIExport. Create it with New (or NewInitializing) and hand it to the manager,
// which calls Start.
type Provider struct {
	// Members supplies Get, IndexField, ClusterNames, ListClusters and Start, which runs the
	// engine.
	kit.Members[key]

	opts   Options
	vw     virtualWorkspace
	log    logr.Logger
	config *rest.Config
	host   cluster.Cluster
	engine *kit.Engine[key]
	paths  pathStore

	// objectKey and objectKind name the endpoint object, e.g. "APIExportEndpointSlice widgets".
	objectKey  client.ObjectKey
	objectKind string
	objectGVK  schema.GroupVersionKind
	// watchedKind is the group and kind of Options.ObjectToWatch.
	watchedKind schema.GroupKind

	// objectProblems reports an endpoint object whose URLs cannot be read, endpointProblems
	// the endpoints that cannot be watched; neither is a member, so both count in
	// BrokenEndpoints, not with the logical clusters'.
	objectProblems   kit.Problems
	endpointProblems kit.Problems
	// objectProblem is touched by the endpoint object's sync only, and once the engine has
	// stopped.
	objectProblem kit.Problem

	mu sync.Mutex
	// object is the endpoint object as last read (nil when it is gone), the object of the
	// Events about endpoints; listed are the URLs it listed when they were last read.
	object    client.Object
	listed    []string
	endpoints map[string]*endpoint // by URL, from an endpoint's first sync until it is stopped
	// engaged is the view the provider engaged, or is engaging, for each logical cluster.
	engaged map[multicluster.ClusterName]*logicalCluster
	// fleet follows the engagements for Fleet (fleet.go) and reads them.
	fleet *fleetreads.Backend
}

// key is what the provider's engine syncs: the endpoint object (its URLs), one endpoint (its
// URL), or one logical cluster, which whichever endpoint serves it engages. Exactly one field is
// set.
type key struct {
	EndpointObject bool
	Endpoint       string
	LogicalCluster logicalcluster.Name
}

// New returns a provider for the endpoint object named name (Options.EndpointObject, by default
// the APIExportEndpointSlice kcp creates for each APIExport and names after it) in the kcp
// workspace cfg points at (<kcp>/clusters/<workspace path>); name a namespaced object
// "<namespace>/<name>". The same credentials are used for the virtual workspace endpoints the
// object lists. New builds a host cluster whose cache holds that object only, which Start runs.
func New(cfg *rest.Config, name string, opts Options) (*Provider, error) {
	return newProvider(cfg, name, opts, apiExportWorkspace)
}

// newProvider is New and NewInitializing: one engine, whose defaults depend on the kind of
// virtual workspace.
func newProvider(cfg *rest.Config, name string, opts Options, vw virtualWorkspace) (*Provider, error) {
	if cfg == nil {
		return nil, errors.New("kcp provider: config is nil")
	}
	host := cfg.Host
	if err := kubeconfig.CheckServerURL("the config's Host", host); err != nil {
		return nil, fmt.Errorf("kcp provider: the config's Host is refused: %w", err)
	}
	o, err := opts.withDefaults(vw)
	if err != nil {
		return nil, fmt.Errorf("kcp provider: %w", err)
	}
	if len(o.ClusterOptions) > 0 {
		return nil, errors.New("kcp provider: Options.ClusterOptions cannot apply: a logical cluster is a view of its endpoint's shared cache, not a cluster built with cluster.New (set Options.Scheme)")
	}
	objectGVK, err := apiutil.GVKForObject(o.EndpointObject, o.Scheme)
	if err != nil {
		return nil, fmt.Errorf("kcp provider: Options.EndpointObject: %w", err)
	}
	watchedGVK, err := apiutil.GVKForObject(o.ObjectToWatch, o.Scheme)
	if err != nil {
		return nil, fmt.Errorf("kcp provider: Options.ObjectToWatch: %w", err)
	}
	objectKey := client.ObjectKey{Name: name}
	if ns, n, namespaced := strings.Cut(name, "/"); namespaced {
		objectKey = client.ObjectKey{Namespace: ns, Name: n}
	}
	if objectKey.Name == "" || objectKey.Namespace == "" && strings.Contains(name, "/") {
		return nil, fmt.Errorf("kcp provider: the name of the %s is empty or not <namespace>/<name>: %q", objectGVK.Kind, name)
	}
	// The cache holds the endpoint object only. A default field selector rather than a
	// ByObject entry, so that New needs no request to kcp: Start reports a missing API.
	hostCluster, err := kit.NewHost(providerName, cfg, o.Logger, nil, func(co *cluster.Options) {
		co.Scheme = o.Scheme
		co.Cache.DefaultFieldSelector = fields.OneTermEqualSelector("metadata.name", objectKey.Name)
		if objectKey.Namespace != "" {
			co.Cache.DefaultNamespaces = kit.CacheNamespaces([]string{objectKey.Namespace})
		}
	})
	if err != nil {
		return nil, err
	}
	p := &Provider{
		opts:        o,
		vw:          vw,
		log:         o.Logger,
		config:      rest.CopyConfig(cfg),
		host:        hostCluster,
		objectKey:   objectKey,
		objectKind:  objectGVK.Kind + " " + name,
		objectGVK:   objectGVK,
		watchedKind: watchedGVK.GroupKind(),
		endpoints:   map[string]*endpoint{},
		engaged:     map[multicluster.ClusterName]*logicalCluster{},
		fleet:       fleetreads.New(o.Logger, o.CacheSyncTimeout),
	}
	p.engine, err = p.Init(kit.EngineOptions[key]{Name: providerName, Options: o.Options, Host: hostCluster,
		Sync: p.sync, Sources: []kit.Source[key]{endpointObjectSource{p}}, Keys: p.endpointKeys, Subject: "Logical cluster"})
	if err != nil {
		return nil, err
	}
	p.objectProblems = kit.Problems{Subject: "Endpoints of " + p.objectKind, Errors: Errors, Broken: BrokenEndpoints, Record: p.engine.Record}
	p.endpointProblems = kit.Problems{Subject: "Endpoint", Errors: Errors, Broken: BrokenEndpoints, Record: p.engine.Record}
	return p, nil
}

// sync syncs the endpoint object, an endpoint or a logical cluster.
func (p *Provider) sync(ctx context.Context, k key) kit.Result {
	switch {
	case k.EndpointObject:
		return p.syncEndpointObject(ctx)
	case k.Endpoint != "":
		return p.syncEndpoint(ctx, k.Endpoint)
	}
	return p.syncLogicalCluster(ctx, k)
}

// endpointObjectSource queues the endpoint object as the host's informer sees it change, and
// stops every endpoint's cache when the engine stops, after it has disengaged the logical
// clusters that read from them.
type endpointObjectSource struct{ p *Provider }

func (s endpointObjectSource) Start(ctx context.Context, e *kit.Engine[key]) (stop func(), err error) {
	gvk := s.p.objectGVK
	informerHint := "is " + gvk.GroupVersion().String() + " " + gvk.Kind + " served where the config points?"
	syncHint := "may the provider list and watch " + gvk.Kind + " objects where the config points?"
	if _, isSlice := s.p.opts.EndpointObject.(*apisv1alpha1.APIExportEndpointSlice); isSlice {
		informerHint = "is apis.kcp.io served where the config points, i.e. the workspace of the APIExport?"
		syncHint = "is apis.kcp.io served where the config points, and may the provider list and watch apiexportendpointslices?"
	}
	stopWatch, err := kit.HostObjects[key]{
		Informers: s.p.host.GetCache(),
		Watches: []kit.Watch[key]{{
			Object: s.p.opts.EndpointObject,
			Kind:   s.p.objectKind,
			// The object's sync reads its URLs and queues the endpoints it lists and listed.
			Keys:         func(client.Object) []key { return []key{{EndpointObject: true}} },
			InformerHint: informerHint,
			SyncHint:     syncHint,
		}},
	}.Start(ctx, e)
	if err != nil {
		return nil, err
	}
	s.p.log.Info("Watching the endpoint object", "object", s.p.objectKind)
	return func() {
		stopWatch()
		s.p.stopAllEndpoints()
	}, nil
}

// syncEndpointObject reads the URLs of the endpoint object and queues every endpoint it lists
// or listed, whose syncs start or stop them. URLs that cannot be read are a problem of the
// object, reported on it; the endpoints it listed before stay.
func (p *Provider) syncEndpointObject(ctx context.Context) kit.Result {
	obj, ok := p.opts.EndpointObject.DeepCopyObject().(client.Object)
	if !ok {
		return kit.Result{}
	}
	switch err := p.host.GetCache().Get(ctx, p.objectKey, obj); {
	case apierrors.IsNotFound(err):
		obj = nil
	case err != nil:
		p.log.Error(err, "Reading the endpoint object from the host cache", "object", p.objectKind)
		return kit.Result{Retry: true}
	}
	var urls []string
	if obj != nil {
		extracted, err := p.opts.EndpointURLs(obj)
		if err != nil {
			p.mu.Lock()
			p.object = obj
			kept := len(p.listed)
			p.mu.Unlock()
			// Retried when the object changes (and every ResyncPeriod): the same object gives
			// the same answer.
			p.objectProblems.Report(&p.objectProblem, p.log, obj, nil, ReasonInvalidEndpointObject, ReasonInvalidEndpointObject,
				fmt.Errorf("reading the endpoint URLs of %s: %w; keeping the %d endpoints it listed before", p.objectKind, err, kept))
			return kit.Result{}
		}
		urls = normalizeURLs(extracted)
		p.objectProblems.Resolve(&p.objectProblem, p.log)
	} else {
		p.objectProblems.Drop(&p.objectProblem)
	}
	p.mu.Lock()
	p.object = obj
	before := p.listed
	p.listed = urls
	p.mu.Unlock()
	for _, url := range normalizeURLs(append(slices.Clone(before), urls...)) {
		p.engine.Add(key{Endpoint: url})
	}
	return kit.Result{}
}

// listing returns the endpoint object as last read, nil when it is gone, and whether it lists
// url.
func (p *Provider) listing(url string) (client.Object, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.object, slices.Contains(p.listed, url)
}

// endpointKeys returns the keys of the endpoint object and of the endpoints the provider knows,
// for the periodic resync.
func (p *Provider) endpointKeys() []key {
	p.mu.Lock()
	defer p.mu.Unlock()
	keys := make([]key, 0, len(p.endpoints)+1)
	keys = append(keys, key{EndpointObject: true})
	for url := range p.endpoints {
		keys = append(keys, key{Endpoint: url})
	}
	return keys
}

// EndpointURLs returns the virtual workspace URLs of an APIExportEndpointSlice's status, without
// trailing slashes and duplicates, in order: the default of Options.EndpointURLs for a slice.
func EndpointURLs(slice *apisv1alpha1.APIExportEndpointSlice) []string {
	urls := make([]string, 0, len(slice.Status.APIExportEndpoints))
	for _, ep := range slice.Status.APIExportEndpoints {
		urls = append(urls, ep.URL)
	}
	return normalizeURLs(urls)
}

// normalizeURLs returns urls without trailing slashes, empty URLs and duplicates, in order.
func normalizeURLs(in []string) []string {
	var urls []string
	for _, url := range in {
		url = strings.TrimRight(url, "/")
		if url != "" && !slices.Contains(urls, url) {
			urls = append(urls, url)
		}
	}
	return urls
}

// runningEndpoints returns the endpoints whose caches have synced and that are not stopping,
// sorted by URL so that a logical cluster served by two prefers the same one every time.
func (p *Provider) runningEndpoints() []*endpoint {
	p.mu.Lock()
	all := slices.Collect(maps.Values(p.endpoints))
	p.mu.Unlock()
	running := slices.DeleteFunc(all, func(ep *endpoint) bool { return !ep.running() })
	slices.SortFunc(running, func(a, b *endpoint) int { return strings.Compare(a.url, b.url) })
	return running
}

// stopAllEndpoints stops every endpoint's cache, as the provider stops.
func (p *Provider) stopAllEndpoints() {
	p.mu.Lock()
	all := slices.Collect(maps.Values(p.endpoints))
	p.endpoints = map[string]*endpoint{}
	p.mu.Unlock()
	p.objectProblems.Drop(&p.objectProblem)
	var wg sync.WaitGroup
	for _, ep := range all {
		wg.Go(func() {
			ep.stop()
			p.endpointProblems.Drop(&ep.problem)
		})
	}
	wg.Wait()
}
