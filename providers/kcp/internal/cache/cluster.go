// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package cache

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/record"

	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/kcp-dev/logicalcluster/v3"
)

var _ cluster.Cluster = &Cluster{}

// Cluster is one logical cluster of an endpoint, as the provider engages it: its client writes
// to <url>/clusters/<name> and reads from the endpoint's shared Wildcard cache through a Scoped
// view (live, for initializing workspaces); its API reader reads live from
// <url>/clusters/<name>.
type Cluster struct {
	config     *rest.Config
	httpClient *http.Client
	scheme     *runtime.Scheme
	mapper     apimeta.RESTMapper
	cache      *Scoped
	client     client.Client
	apiReader  client.Reader
	recorders  *recorders
}

// clusterHost returns the URL of logical cluster name on the endpoint at endpointURL:
// <endpointURL>/clusters/<name>.
func clusterHost(endpointURL string, name logicalcluster.Name) (string, error) {
	host, err := url.JoinPath(endpointURL, name.Path().RequestPath())
	if err != nil {
		return "", fmt.Errorf("building the URL of logical cluster %q: %w", name, err)
	}
	return host, nil
}

// NewCluster returns logical cluster name of the endpoint whose cache is shared, a running
// Wildcard cache; watched is shared's informer of the type the provider watches, whose sync the
// cluster's WaitForCacheSync waits for. With cacheOnly empty, its client reads from the shared
// cache and it uses the endpoint's REST mapper. With cacheOnly set (initializing workspaces,
// whose virtual workspace lists no other kind across workspaces), its cache serves that kind
// only, and its client reads live and discovers the logical cluster's own APIs. log gets the
// cluster's name as "cluster".
func NewCluster(shared *Wildcard, watched toolscache.SharedIndexInformer, name logicalcluster.Name, log logr.Logger, cacheOnly schema.GroupKind) (*Cluster, error) {
	cfg := rest.CopyConfig(shared.config)
	scheme := shared.scheme
	host, err := clusterHost(shared.URL(), name)
	if err != nil {
		return nil, err
	}
	cfg.Host = host
	// Transports are shared by configs that differ in host only, so the logical clusters of an
	// endpoint share connections.
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the HTTP client of logical cluster %q: %w", name, err)
	}
	sc := newScoped(shared, watched, name)
	sc.only = cacheOnly
	// Every logical cluster of a virtual workspace serves the same APIs, so they share the
	// endpoint's REST mapper instead of each running discovery.
	mapper := shared.mapper
	cacheOptions := &client.CacheOptions{Reader: sc}
	if !cacheOnly.Empty() {
		// Discovery runs lazily, as types are used.
		if mapper, err = apiutil.NewDynamicRESTMapper(cfg, httpClient); err != nil {
			return nil, fmt.Errorf("creating the REST mapper of logical cluster %q: %w", name, err)
		}
		cacheOptions = nil
	}
	cl, err := client.New(cfg, client.Options{
		HTTPClient: httpClient,
		Scheme:     scheme,
		Mapper:     mapper,
		Cache:      cacheOptions,
	})
	if err != nil {
		return nil, fmt.Errorf("creating the client of logical cluster %q: %w", name, err)
	}
	apiReader, err := client.New(cfg, client.Options{HTTPClient: httpClient, Scheme: scheme, Mapper: mapper})
	if err != nil {
		return nil, fmt.Errorf("creating the API reader of logical cluster %q: %w", name, err)
	}
	return &Cluster{
		config:     cfg,
		httpClient: httpClient,
		scheme:     scheme,
		mapper:     mapper,
		cache:      sc,
		client:     cl,
		apiReader:  apiReader,
		recorders:  &recorders{config: cfg, httpClient: httpClient, scheme: scheme, log: log.WithValues("cluster", name.String())},
	}, nil
}

func (c *Cluster) GetHTTPClient() *http.Client          { return c.httpClient }
func (c *Cluster) GetConfig() *rest.Config              { return rest.CopyConfig(c.config) }
func (c *Cluster) GetCache() crcache.Cache              { return c.cache }
func (c *Cluster) GetScheme() *runtime.Scheme           { return c.scheme }
func (c *Cluster) GetClient() client.Client             { return c.client }
func (c *Cluster) GetFieldIndexer() client.FieldIndexer { return c.cache }
func (c *Cluster) GetRESTMapper() apimeta.RESTMapper    { return c.mapper }
func (c *Cluster) GetAPIReader() client.Reader          { return c.apiReader }

func (c *Cluster) GetEventRecorderFor(name string) record.EventRecorder {
	return c.recorders.legacyRecorder(name)
}

func (c *Cluster) GetEventRecorder(name string) recorder.EventRecorder {
	return c.recorders.recorder(name)
}

// Start runs nothing of its own (the endpoint runs the shared cache) and blocks until ctx ends,
// the cluster's disengagement; then it removes the cluster's event handlers from the shared
// informers and stops its event recorders. It runs exactly while the cluster is engaged.
func (c *Cluster) Start(ctx context.Context) error {
	<-ctx.Done()
	c.cache.stop()
	c.recorders.stop()
	return nil
}

// Stopped reports whether the cluster was engaged and disengaged: it cannot be engaged again.
func (c *Cluster) Stopped() bool { return c.cache.isStopped() }

// View returns the cluster's cache, a view of the endpoint's shared cache.
func (c *Cluster) View() *Scoped { return c.cache }

// recorders creates a logical cluster's event broadcasters when first asked for a recorder, and
// shuts them down when the cluster is disengaged.
type recorders struct {
	config     *rest.Config
	httpClient *http.Client
	scheme     *runtime.Scheme
	log        logr.Logger

	mu      sync.Mutex
	stopped bool
	events  events.EventBroadcaster
	legacy  record.EventBroadcaster
	cancel  context.CancelFunc
}

func (r *recorders) clientset() (*kubernetes.Clientset, error) {
	return kubernetes.NewForConfigAndClient(r.config, r.httpClient)
}

// recorder returns an events.k8s.io recorder; after stop, or when the broadcaster cannot be
// created, one that drops events.
func (r *recorders) recorder(name string) recorder.EventRecorder {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return discardRecorder{}
	}
	if r.events == nil {
		cs, err := r.clientset()
		if err != nil {
			r.log.Error(err, "Creating the event client; events are dropped")
			return discardRecorder{}
		}
		ctx, cancel := context.WithCancel(context.Background())
		b := events.NewBroadcaster(&events.EventSinkImpl{Interface: cs.EventsV1()})
		if err := b.StartRecordingToSinkWithContext(ctx); err != nil {
			cancel()
			r.log.Error(err, "Starting the event recorder; events are dropped")
			return discardRecorder{}
		}
		r.events, r.cancel = b, cancel
	}
	// client-go's recorders implement AnnotatedEventf too; NewRecorder's declared type just does
	// not say so.
	rec, ok := r.events.NewRecorder(r.scheme, name).(recorder.EventRecorder)
	if !ok {
		r.log.Error(nil, "The event recorder does not support annotated events; events are dropped")
		return discardRecorder{}
	}
	return rec
}

// legacyRecorder returns a core/v1 Events recorder; after stop, or when the broadcaster cannot
// be created, one that drops events.
func (r *recorders) legacyRecorder(name string) record.EventRecorder {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return &record.FakeRecorder{}
	}
	if r.legacy == nil {
		cs, err := r.clientset()
		if err != nil {
			r.log.Error(err, "Creating the event client; events are dropped")
			return &record.FakeRecorder{}
		}
		b := record.NewBroadcaster()
		b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events("")})
		r.legacy = b
	}
	return r.legacy.NewRecorder(r.scheme, corev1.EventSource{Component: name})
}

func (r *recorders) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopped = true
	if r.events != nil {
		r.events.Shutdown()
		r.cancel()
	}
	if r.legacy != nil {
		r.legacy.Shutdown()
	}
}

// discardRecorder is a recorder.EventRecorder that drops every event.
type discardRecorder struct{}

func (discardRecorder) Eventf(runtime.Object, runtime.Object, string, string, string, string, ...any) {
}

func (discardRecorder) AnnotatedEventf(runtime.Object, runtime.Object, map[string]string, string, string, string, string, ...any) {
}
