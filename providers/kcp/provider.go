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
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/kcp-dev/logicalcluster/v3"
	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"

	"mcr.dev/core/kubeconfig"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
)

// Provider engages every logical cluster of a kcp virtual workspace, for example the workspaces
// that bind an APIExport. Create it with New and hand it to the manager, which calls Start.
type Provider struct {
	// Members supplies Get, IndexField, ClusterNames, ListClusters and Start, which runs the
	// engine.
	kit.Members[key]

	opts      Options
	log       logr.Logger
	config    *rest.Config
	sliceName string
	host      cluster.Cluster
	engine    *kit.Engine[key]
	paths     pathStore

	// endpointProblems reports endpoints that cannot be watched: an endpoint is no member, so
	// its problems count in BrokenEndpoints, not with the logical clusters'.
	endpointProblems kit.Problems

	mu        sync.Mutex
	endpoints map[string]*endpoint // by URL, from an endpoint's first sync until it is stopped
	// engaged is the view the provider engaged, or is engaging, for each logical cluster.
	engaged map[multicluster.ClusterName]*scopedCluster
}

// key is what the provider's engine syncs: one endpoint of the slice (its URL), or one logical
// cluster, which whichever endpoint serves it engages. Exactly one field is set.
type key struct {
	Endpoint       string
	LogicalCluster logicalcluster.Name
}

// New returns a provider for the APIExportEndpointSlice named endpointSliceName in the kcp
// workspace cfg points at (<kcp>/clusters/<workspace path>); kcp creates one named after each
// APIExport. The same credentials are used for the virtual workspace endpoints the slice lists.
// New builds a host cluster whose cache holds that slice only, which Start runs.
func New(cfg *rest.Config, endpointSliceName string, opts Options) (*Provider, error) {
	if cfg == nil {
		return nil, errors.New("kcp provider: config is nil")
	}
	if endpointSliceName == "" {
		return nil, errors.New("kcp provider: the APIExportEndpointSlice name is empty")
	}
	host := cfg.Host
	if err := kubeconfig.CheckServerURL("the config's Host", host); err != nil {
		return nil, fmt.Errorf("kcp provider: the config's Host is refused: %w", err)
	}
	o, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("kcp provider: %w", err)
	}
	if len(o.ClusterOptions) > 0 {
		return nil, errors.New("kcp provider: Options.ClusterOptions cannot apply: a logical cluster is a view of its endpoint's shared cache, not a cluster built with cluster.New (set Options.Scheme)")
	}
	// The cache holds the slice only. A default field selector rather than a ByObject entry,
	// so that New needs no request to kcp: Start reports a missing API.
	hostCluster, err := kit.NewHost(providerName, cfg, o.Logger, func(co *cluster.Options) {
		co.Scheme = o.Scheme
		co.Cache.DefaultFieldSelector = fields.OneTermEqualSelector("metadata.name", endpointSliceName)
	})
	if err != nil {
		return nil, err
	}
	p := &Provider{
		opts:      o,
		log:       o.Logger,
		config:    rest.CopyConfig(cfg),
		sliceName: endpointSliceName,
		host:      hostCluster,
		endpoints: map[string]*endpoint{},
		engaged:   map[multicluster.ClusterName]*scopedCluster{},
	}
	p.engine, err = p.Init(kit.EngineOptions[key]{
		Name:    providerName,
		Options: o.Options,
		Sync:    p.sync,
		Sources: []kit.Source[key]{sliceSource{p}},
		Keys:    p.endpointKeys,
		Host:    hostCluster,
		RunHost: true,
		Subject: "Logical cluster",
		Errors:  Errors,
		Broken:  BrokenLogicalClusters,
	})
	if err != nil {
		return nil, err
	}
	p.endpointProblems = kit.Problems{Subject: "Endpoint", Errors: Errors, Broken: BrokenEndpoints, Events: p.engine.Events()}
	return p, nil
}

// sync syncs an endpoint or a logical cluster.
func (p *Provider) sync(ctx context.Context, k key) kit.Result {
	if k.Endpoint != "" {
		return p.syncEndpoint(ctx, k.Endpoint)
	}
	return p.syncLogicalCluster(ctx, k)
}

// sliceSource queues the endpoints of the slice as the host's informer sees it change, and
// stops every endpoint's cache when the engine stops, after it has disengaged the logical
// clusters that read from them.
type sliceSource struct{ p *Provider }

func (s sliceSource) Start(ctx context.Context, e *kit.Engine[key]) (stop func(), err error) {
	stopWatch, err := kit.HostObjects[key]{
		Informers: s.p.host.GetCache(),
		Watches: []kit.Watch[key]{{
			Object: &apisv1alpha1.APIExportEndpointSlice{},
			Kind:   "APIExportEndpointSlice " + s.p.sliceName,
			// Old and new URLs, and the last ones of a deleted slice: each endpoint's sync
			// reads the slice and starts or stops the endpoint.
			Keys: func(o client.Object) []key {
				slice, ok := o.(*apisv1alpha1.APIExportEndpointSlice)
				if !ok {
					return nil
				}
				var keys []key
				for _, url := range EndpointURLs(slice) {
					keys = append(keys, key{Endpoint: url})
				}
				return keys
			},
			KeysOfOld:    true,
			InformerHint: "is apis.kcp.io served where the config points, i.e. the workspace of the APIExport?",
			SyncHint:     "is apis.kcp.io served where the config points, and may the provider list and watch apiexportendpointslices?",
		}},
	}.Start(ctx, e)
	if err != nil {
		return nil, err
	}
	s.p.log.Info("Watching APIExportEndpointSlice", "slice", s.p.sliceName)
	return func() {
		stopWatch()
		s.p.stopAllEndpoints()
	}, nil
}

// endpointKeys returns the keys of the endpoints the provider knows, for the periodic resync.
func (p *Provider) endpointKeys() []key {
	p.mu.Lock()
	defer p.mu.Unlock()
	keys := make([]key, 0, len(p.endpoints))
	for url := range p.endpoints {
		keys = append(keys, key{Endpoint: url})
	}
	return keys
}

// EndpointURLs returns the virtual workspace URLs of an APIExportEndpointSlice's status, without
// trailing slashes and duplicates, in order.
func EndpointURLs(slice *apisv1alpha1.APIExportEndpointSlice) []string {
	var urls []string
	for _, ep := range slice.Status.APIExportEndpoints {
		url := strings.TrimRight(ep.URL, "/")
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
	var wg sync.WaitGroup
	for _, ep := range all {
		wg.Go(func() {
			ep.stop()
			p.endpointProblems.Drop(&ep.problem)
		})
	}
	wg.Wait()
}
