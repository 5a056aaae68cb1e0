package kcp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	conditionsv1alpha1 "github.com/kcp-dev/sdk/apis/third_party/conditions/apis/conditions/v1alpha1"

	"mcr.dev/core/clusters"
	"mcr.dev/core/multicluster"
)

var (
	_ multicluster.Provider         = &Provider{}
	_ multicluster.ProviderRunnable = &Provider{}
)

// Defaults of Options.
const (
	DefaultRetryMinDelay = time.Second
	DefaultRetryMaxDelay = time.Minute
)

// Options configures a Provider. The zero value of every field selects its default; defaults are
// applied in one place, Options.withDefaults.
type Options struct {
	// Scheme is the scheme of the provider's caches and of every logical cluster's client. It
	// must hold ObjectToWatch and every type controllers read.
	//
	// Defaults to the client-go scheme plus apis.kcp.io/v1alpha1.
	Scheme *runtime.Scheme

	// ObjectToWatch is the type whose objects, listed through each endpoint's /clusters/*
	// wildcard, make their logical clusters (their kcp.io/cluster annotation) part of the
	// fleet. Use another type for virtual workspaces other than the APIExport one.
	//
	// Defaults to &apisv1alpha1.APIBinding{}.
	ObjectToWatch client.Object

	// IsReady reports whether an object of ObjectToWatch makes its logical cluster ready. A
	// logical cluster is engaged while at least one of its objects is ready; it is disengaged
	// when none is, and when its last object is deleted. It must be quick and must not block.
	//
	// Defaults to BindingReady (condition Ready is True) when ObjectToWatch is an APIBinding,
	// and to every object otherwise.
	IsReady func(obj client.Object) bool

	// CacheSyncTimeout bounds the wait for an endpoint's wildcard informer of ObjectToWatch to
	// sync (an endpoint that exceeds it is retried with backoff while the others carry on), the
	// wait for each logical cluster to be ready before it is engaged, and the wait for the
	// APIExportEndpointSlice informer in Start.
	//
	// Defaults to clusters.DefaultCacheSyncTimeout (one minute).
	CacheSyncTimeout time.Duration

	// RetryMinDelay and RetryMaxDelay bound the exponential backoff with which an endpoint
	// that cannot be watched, and a logical cluster that cannot be engaged, are retried.
	//
	// Default to DefaultRetryMinDelay (1s) and DefaultRetryMaxDelay (1m).
	RetryMinDelay time.Duration
	RetryMaxDelay time.Duration

	// EventRecorder records Events on the APIExportEndpointSlice about its endpoints.
	//
	// Defaults to a recorder writing events.k8s.io/v1 Events through the config given to New,
	// reporting controller EventSource.
	EventRecorder events.EventRecorder

	// Log receives the provider's messages, with the logical cluster under the key "cluster"
	// and the endpoint URL under the key "endpoint".
	//
	// Defaults to controller-runtime's logger named "kcp-provider".
	Log logr.Logger
}

// withDefaults is the only place defaults are applied.
func (o Options) withDefaults() (Options, error) {
	if o.Scheme == nil {
		o.Scheme = runtime.NewScheme()
		if err := clientgoscheme.AddToScheme(o.Scheme); err != nil {
			return o, err
		}
		if err := apisv1alpha1.AddToScheme(o.Scheme); err != nil {
			return o, err
		}
	}
	if o.ObjectToWatch == nil {
		o.ObjectToWatch = &apisv1alpha1.APIBinding{}
	}
	if o.IsReady == nil {
		o.IsReady = func(client.Object) bool { return true }
		if _, isBinding := o.ObjectToWatch.(*apisv1alpha1.APIBinding); isBinding {
			o.IsReady = BindingReady
		}
	}
	if o.CacheSyncTimeout <= 0 {
		o.CacheSyncTimeout = clusters.DefaultCacheSyncTimeout
	}
	if o.RetryMinDelay <= 0 {
		o.RetryMinDelay = DefaultRetryMinDelay
	}
	if o.RetryMaxDelay <= 0 {
		o.RetryMaxDelay = DefaultRetryMaxDelay
	}
	if o.RetryMaxDelay < o.RetryMinDelay {
		o.RetryMaxDelay = o.RetryMinDelay
	}
	if o.Log.GetSink() == nil {
		o.Log = ctrllog.Log.WithName("kcp-provider")
	}
	return o, nil
}

// BindingReady reports whether obj is an APIBinding whose condition Ready is True: the default
// of Options.IsReady.
func BindingReady(obj client.Object) bool {
	b, ok := obj.(*apisv1alpha1.APIBinding)
	if !ok {
		return false
	}
	for _, c := range b.Status.Conditions {
		if c.Type == conditionsv1alpha1.ReadyCondition {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Provider engages every logical cluster of a kcp virtual workspace, for example the workspaces
// that bind an APIExport. Create it with New and hand it to the manager, which calls Start.
type Provider struct {
	// The embedded set supplies Get, IndexField and ClusterNames.
	clusters.Clusters[cluster.Cluster]

	opts      Options
	log       logr.Logger
	config    *rest.Config
	sliceName string
	host      cache.Cache
	paths     pathStore

	mu        sync.Mutex
	started   bool
	endpoints map[string]*endpoint                   // by URL
	owners    map[multicluster.ClusterName]*endpoint // the endpoint that engaged a logical cluster

	// Set by Start before any endpoint runs.
	aware    multicluster.Aware
	recorder events.EventRecorder
}

// New returns a provider for the APIExportEndpointSlice named endpointSliceName in the kcp
// workspace cfg points at (<kcp>/clusters/<workspace path>); kcp creates one named after each
// APIExport. The same credentials are used for the virtual workspace endpoints the slice lists.
// New builds a cache for that slice only, which Start runs.
func New(cfg *rest.Config, endpointSliceName string, opts Options) (*Provider, error) {
	if cfg == nil {
		return nil, errors.New("kcp provider: config is nil")
	}
	if endpointSliceName == "" {
		return nil, errors.New("kcp provider: the APIExportEndpointSlice name is empty")
	}
	o, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("kcp provider: %w", err)
	}
	// The cache holds the slice only. A default field selector rather than a ByObject entry,
	// so that New needs no request to kcp: Start reports a missing API.
	host, err := cache.New(cfg, cache.Options{
		Scheme:               o.Scheme,
		DefaultFieldSelector: fields.OneTermEqualSelector("metadata.name", endpointSliceName),
	})
	if err != nil {
		return nil, fmt.Errorf("kcp provider: creating the cache for APIExportEndpointSlice %s: %w", endpointSliceName, err)
	}
	p := &Provider{
		opts:      o,
		log:       o.Log,
		config:    rest.CopyConfig(cfg),
		sliceName: endpointSliceName,
		host:      host,
		endpoints: map[string]*endpoint{},
		owners:    map[multicluster.ClusterName]*endpoint{},
	}
	p.Options = clusters.Options[cluster.Cluster]{
		CacheSyncTimeout: o.CacheSyncTimeout,
		Log:              o.Log,
	}
	return p, nil
}

// Start watches the APIExportEndpointSlice and, for every endpoint URL in its status, the
// logical clusters served there; it engages each ready logical cluster with aware, until ctx
// ends. Then it disengages every cluster, stops every endpoint and returns nil. It fails when
// the slice's informer does not sync within Options.CacheSyncTimeout (the apis.kcp.io API is
// not served where the config points, or list/watch is forbidden) and when called twice. The
// manager calls Start; users do not.
func (p *Provider) Start(ctx context.Context, aware multicluster.Aware) error {
	p.mu.Lock()
	if p.started {
		p.mu.Unlock()
		return errors.New("kcp provider: Start called twice")
	}
	p.started = true
	p.aware = aware
	p.mu.Unlock()

	// Deferred in this order so that the context ends before the wait for what runs on it.
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	p.recorder = p.opts.EventRecorder
	if p.recorder == nil {
		cs, err := kubernetes.NewForConfig(p.config)
		if err != nil {
			return fmt.Errorf("kcp provider: creating the event client: %w", err)
		}
		broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: cs.EventsV1()})
		if err := broadcaster.StartRecordingToSinkWithContext(ctx); err != nil {
			return fmt.Errorf("kcp provider: starting the event recorder: %w", err)
		}
		defer broadcaster.Shutdown()
		p.recorder = broadcaster.NewRecorder(p.opts.Scheme, EventSource)
	}

	wg.Go(func() {
		if err := p.host.Start(ctx); err != nil && ctx.Err() == nil {
			p.log.Error(err, "The cache of the APIExportEndpointSlice stopped", "slice", p.sliceName)
		}
	})

	changed := make(chan struct{}, 1)
	stopWatching, err := p.watchSlice(ctx, changed)
	if err != nil {
		return err
	}
	defer stopWatching()
	p.log.Info("Watching APIExportEndpointSlice", "slice", p.sliceName)

	for {
		select {
		case <-ctx.Done():
			p.stopAllEndpoints()
			p.RemoveAll()
			return nil
		case <-changed:
			p.syncEndpoints(ctx)
		}
	}
}

// watchSlice registers a handler on the slice informer that signals changed, and waits at most
// Options.CacheSyncTimeout until it has seen the slice (or its absence). The returned func
// removes the handler.
func (p *Provider) watchSlice(ctx context.Context, changed chan<- struct{}) (stop func(), err error) {
	waitCtx, cancel := context.WithTimeout(ctx, p.opts.CacheSyncTimeout)
	defer cancel()
	informer, err := p.host.GetInformer(waitCtx, &apisv1alpha1.APIExportEndpointSlice{}, cache.BlockUntilSynced(false))
	if err != nil {
		return nil, fmt.Errorf("kcp provider: watching APIExportEndpointSlice %s (is apis.kcp.io served where the config points, i.e. the workspace of the APIExport?): %w", p.sliceName, err)
	}
	signal := func(any) {
		select {
		case changed <- struct{}{}:
		default: // a sync is pending already, and it reads the latest state
		}
	}
	reg, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    signal,
		UpdateFunc: func(_, obj any) { signal(obj) },
		DeleteFunc: signal,
	})
	if err != nil {
		return nil, fmt.Errorf("kcp provider: watching APIExportEndpointSlice %s: %w", p.sliceName, err)
	}
	stop = func() { _ = informer.RemoveEventHandler(reg) }
	if !waitFor(waitCtx, reg.HasSynced) {
		stop()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("kcp provider: waiting for APIExportEndpointSlice %s: %w", p.sliceName, ctx.Err())
		}
		return nil, fmt.Errorf("kcp provider: APIExportEndpointSlice %s did not sync within %s (is apis.kcp.io served, and may the provider list and watch apiexportendpointslices?)", p.sliceName, p.opts.CacheSyncTimeout)
	}
	signal(nil) // also without any slice: nothing to serve yet
	return stop, nil
}

// syncEndpoints starts an endpoint for every URL of the slice's status that has none, and stops
// the endpoints of URLs that are gone. A slice that does not exist has no endpoints.
func (p *Provider) syncEndpoints(ctx context.Context) {
	slice := &apisv1alpha1.APIExportEndpointSlice{}
	var urls []string
	err := p.host.Get(ctx, client.ObjectKey{Name: p.sliceName}, slice)
	switch {
	case apierrors.IsNotFound(err):
		slice = nil
	case err != nil:
		p.log.Error(err, "Reading the APIExportEndpointSlice from the cache", "slice", p.sliceName)
		return
	default:
		urls = EndpointURLs(slice)
	}

	p.mu.Lock()
	var gone []*endpoint
	for url, e := range p.endpoints {
		if !slices.Contains(urls, url) {
			gone = append(gone, e)
			delete(p.endpoints, url)
		}
	}
	for _, url := range urls {
		if _, ok := p.endpoints[url]; !ok {
			e := newEndpoint(ctx, p, url, slice)
			p.endpoints[url] = e
			go e.run()
		}
	}
	p.mu.Unlock()
	p.stopEndpoints(gone)
}

// EndpointURLs returns the virtual workspace URLs of an APIExportEndpointSlice's status, without
// trailing slashes and duplicates, in order.
func EndpointURLs(slice *apisv1alpha1.APIExportEndpointSlice) []string {
	var urls []string
	for _, ep := range slice.Status.APIExportEndpoints {
		url := strings.TrimSuffix(ep.URL, "/")
		if url != "" && !slices.Contains(urls, url) {
			urls = append(urls, url)
		}
	}
	return urls
}

// stopAllEndpoints stops every endpoint, as stopEndpoints does.
func (p *Provider) stopAllEndpoints() {
	p.mu.Lock()
	stopping := make([]*endpoint, 0, len(p.endpoints))
	for url, e := range p.endpoints {
		stopping = append(stopping, e)
		delete(p.endpoints, url)
	}
	p.mu.Unlock()
	p.stopEndpoints(stopping)
}

// stopEndpoints stops the given endpoints concurrently and returns once each has disengaged its
// clusters and stopped its cache.
func (p *Provider) stopEndpoints(stopping []*endpoint) {
	var wg sync.WaitGroup
	for _, e := range stopping {
		wg.Go(e.stop)
	}
	wg.Wait()
}

// claim makes e the endpoint that engages the logical cluster name, unless another endpoint
// does already (a logical cluster lives on one shard; during a move it can show on two).
func (p *Provider) claim(name multicluster.ClusterName, e *endpoint) (owner *endpoint, claimed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if owner, ok := p.owners[name]; ok {
		return owner, owner == e
	}
	p.owners[name] = e
	return e, true
}

// release gives up e's claim on name, and lets the other endpoints that serve name engage it.
func (p *Provider) release(name multicluster.ClusterName, e *endpoint) {
	p.mu.Lock()
	if p.owners[name] != e {
		p.mu.Unlock()
		return
	}
	delete(p.owners, name)
	others := make([]*endpoint, 0, len(p.endpoints))
	for _, other := range p.endpoints {
		if other != e {
			others = append(others, other)
		}
	}
	p.mu.Unlock()
	for _, other := range others {
		other.enqueue(name)
	}
}

// waitFor polls done until it reports true or ctx ends.
func waitFor(ctx context.Context, done func() bool) bool {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !done() {
		select {
		case <-ctx.Done():
			return done()
		case <-tick.C:
		}
	}
	return true
}
