package clusterapi

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"mcr.dev/core/clusters"
	"mcr.dev/core/kubeconfig"
	"mcr.dev/core/multicluster"
)

var (
	_ multicluster.Provider         = &Provider{}
	_ multicluster.ProviderRunnable = &Provider{}
)

// Defaults of Options.
const (
	DefaultRetryMinDelay = time.Second
	DefaultRetryMaxDelay = 5 * time.Minute
	DefaultResyncPeriod  = 10 * time.Minute
)

// Options configures a Provider. The zero value of every field selects its default; defaults are
// applied in one place, Options.withDefaults.
type Options struct {
	// APIVersion is the version of the Cluster type the provider watches and hands to IsReady
	// and Filter (*v1beta2.Cluster or *v1beta1.Cluster).
	//
	// Defaults to V1Beta2.
	APIVersion APIVersion

	// Namespaces restricts the provider to Clusters (and kubeconfig Secrets) in these
	// namespaces. With New, the provider's host cache holds only these namespaces, so Roles in
	// them are enough RBAC.
	//
	// Defaults to none: every namespace.
	Namespaces []string

	// Selector selects Clusters by label. A Cluster whose labels stop matching is disengaged.
	// It is applied by the provider, not by the cache, so that a Cluster that stops matching is
	// seen and disengaged like any other change.
	//
	// Defaults to nil: every Cluster.
	Selector labels.Selector

	// InfrastructureKinds selects Clusters by the kind of their spec.infrastructureRef, e.g.
	// "DockerCluster" or "AWSCluster".
	//
	// Defaults to none: every kind, also Clusters without an infrastructureRef.
	InfrastructureKinds []string

	// Filter is a predicate on the Cluster (of the type APIVersion selects), evaluated after
	// Namespaces, Selector and InfrastructureKinds each time the Cluster changes. A Cluster it
	// stops selecting is disengaged. It must be quick and must not block.
	//
	// Defaults to nil: every Cluster.
	Filter func(ctx context.Context, cluster client.Object) bool

	// IsReady reports whether a selected Cluster is ready to be engaged. A Cluster that stops
	// being ready is disengaged at once (no grace period) and engaged again when it is ready.
	// It must be quick and must not block.
	//
	// Defaults to ControlPlaneInitialized; see also ControlPlaneAvailable.
	IsReady func(ctx context.Context, cluster client.Object) bool

	// Policy says what a kubeconfig may contain. Cluster API kubeconfigs carry inline
	// certificates or tokens, which the zero Policy accepts; a kubeconfig that breaks it gets an
	// InvalidKubeconfig Event on its Cluster naming the offending field and the Policy field
	// that allows it.
	//
	// Defaults to the zero kubeconfig.Policy (mcr.dev/core/kubeconfig): no exec or
	// auth-provider plugins, no local file references, no insecure-skip-tls-verify.
	Policy kubeconfig.Policy

	// RESTOptions change each workload cluster's rest.Config before its cluster is built, in
	// order; an error is reported like an invalid kubeconfig.
	//
	// Defaults to none. Configs that set neither QPS nor Burst get 20 and 30 first.
	RESTOptions []func(*rest.Config) error

	// ClusterOptions are passed to cluster.New for every workload cluster (scheme, cache
	// options, ...).
	//
	// Defaults to none: the client-go scheme and a cache of all namespaces.
	ClusterOptions []cluster.Option

	// HostClusterOptions are passed to cluster.New for the host cluster that New builds, after
	// the provider's own (scheme with the Cluster API types; cache restricted to Namespaces and
	// labeled Secrets). Not used with NewForHost.
	//
	// Defaults to none.
	HostClusterOptions []cluster.Option

	// CacheSyncTimeout bounds, for each workload cluster, the access check and the wait for its
	// cache to sync; a cluster that exceeds it gets a ClusterUnreachable Event and is retried
	// with backoff while the others carry on. It also bounds the wait for the host's informers
	// in Start.
	//
	// Defaults to clusters.DefaultCacheSyncTimeout (one minute).
	CacheSyncTimeout time.Duration

	// RetryMinDelay and RetryMaxDelay bound the exponential backoff with which a Cluster that
	// could not be reached or engaged is retried. Kubeconfigs that are missing or refused are
	// not retried: the next change of the Secret is.
	//
	// Default to DefaultRetryMinDelay (1s) and DefaultRetryMaxDelay (5m).
	RetryMinDelay time.Duration
	RetryMaxDelay time.Duration

	// ResyncPeriod is how often every Cluster is checked again without any change: a safety net
	// that also engages again a cluster whose cache stopped on its own. Unchanged kubeconfigs
	// cost a hash comparison, nothing more.
	//
	// Defaults to DefaultResyncPeriod (10m).
	ResyncPeriod time.Duration

	// EventRecorder records Events on Clusters.
	//
	// Defaults to the host cluster's recorder (events.k8s.io/v1 Events, reporting controller
	// EventSource).
	EventRecorder events.EventRecorder

	// Log receives the provider's messages, with the cluster under the key "cluster".
	// Credentials are never logged.
	//
	// Defaults to controller-runtime's logger named "clusterapi-provider".
	Log logr.Logger
}

// withDefaults is the only place defaults are applied.
func (o Options) withDefaults() Options {
	if o.APIVersion == "" {
		o.APIVersion = V1Beta2
	}
	if o.IsReady == nil {
		o.IsReady = ControlPlaneInitialized
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
	if o.ResyncPeriod <= 0 {
		o.ResyncPeriod = DefaultResyncPeriod
	}
	if o.Log.GetSink() == nil {
		o.Log = ctrllog.Log.WithName("clusterapi-provider")
	}
	return o
}

// Provider engages one cluster for every ready Cluster API Cluster on a management (host)
// cluster. Create it with New or NewForHost and hand it to the manager, which calls Start.
type Provider struct {
	// The embedded set supplies Get, IndexField and ClusterNames.
	clusters.Clusters[cluster.Cluster]

	opts    Options
	host    cluster.Cluster
	ownHost bool // New built host, so Start runs it
	log     logr.Logger

	mu      sync.Mutex
	started bool
	states  map[types.NamespacedName]*clusterState

	// Set by Start before any sync runs.
	aware    multicluster.Aware
	queue    workqueue.TypedRateLimitingInterface[types.NamespacedName]
	recorder events.EventRecorder
}

// clusterState is what the provider remembers about one Cluster. Only the sync of that Cluster
// touches it (the queue runs one sync per Cluster at a time).
type clusterState struct {
	// engaged is the instance engaged for the Cluster, hash the content hash of its kubeconfig.
	engaged cluster.Cluster
	hash    string
	// rejected is the hash of a kubeconfig refused for good (policy, decoding), so that seeing
	// it again neither retries nor repeats the Event.
	rejected string
	// problem is the reported problem, broken whether it counts in BrokenClusters.
	problem string
	broken  bool
}

// New returns a provider that watches Cluster API Clusters on the management cluster hostConfig
// points at. It builds its own host cluster, which Start runs, with a cache that holds only the
// Clusters of Options.Namespaces and the Secrets there labeled cluster.x-k8s.io/cluster-name,
// keeping the data of kubeconfig Secrets only. It needs the RBAC in README.md and nothing else.
func New(hostConfig *rest.Config, opts Options) (*Provider, error) {
	if hostConfig == nil {
		return nil, errors.New("clusterapi provider: host config is nil")
	}
	p, err := newProvider(opts)
	if err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("clusterapi provider: %w", err)
	}
	if err := addToScheme(scheme); err != nil {
		return nil, fmt.Errorf("clusterapi provider: %w", err)
	}
	hasLabel, err := labels.NewRequirement(ClusterNameLabel, selection.Exists, nil)
	if err != nil {
		return nil, fmt.Errorf("clusterapi provider: %w", err)
	}
	hostOpts := append([]cluster.Option{func(co *cluster.Options) {
		co.Scheme = scheme
		co.Logger = p.log.WithName("host")
		if len(p.opts.Namespaces) > 0 {
			co.Cache.DefaultNamespaces = map[string]cache.Config{}
			for _, ns := range p.opts.Namespaces {
				co.Cache.DefaultNamespaces[ns] = cache.Config{}
			}
		}
		co.Cache.ByObject = map[client.Object]cache.ByObject{
			&corev1.Secret{}: {
				Label:     labels.NewSelector().Add(*hasLabel),
				Transform: keepKubeconfigDataOnly,
			},
		}
	}}, p.opts.HostClusterOptions...)
	host, err := cluster.New(hostConfig, hostOpts...)
	if err != nil {
		return nil, fmt.Errorf("clusterapi provider: creating the host cluster: %w", err)
	}
	p.host, p.ownHost = host, true
	return p, nil
}

// NewForHost returns a provider that reads Clusters and Secrets through host's cache, for
// example the manager's own cluster (mgr.GetLocalManager()), to share informers with other
// controllers. host must be started by its owner, and its scheme must hold the Cluster API type
// of Options.APIVersion (clusterv1.AddToScheme). Start only adds event handlers to host's
// informers and removes them when it returns. A default cache holds every Secret of the cluster
// with its data; restrict it with the owner's cache options (ByObject for Secrets, label
// cluster.x-k8s.io/cluster-name) to what the provider needs.
func NewForHost(host cluster.Cluster, opts Options) (*Provider, error) {
	if host == nil {
		return nil, errors.New("clusterapi provider: host cluster is nil")
	}
	p, err := newProvider(opts)
	if err != nil {
		return nil, err
	}
	p.host = host
	return p, nil
}

func newProvider(opts Options) (*Provider, error) {
	o := opts.withDefaults()
	if err := o.APIVersion.validate(); err != nil {
		return nil, fmt.Errorf("clusterapi provider: %w", err)
	}
	p := &Provider{
		opts:   o,
		log:    o.Log,
		states: map[types.NamespacedName]*clusterState{},
	}
	p.Options = clusters.Options[cluster.Cluster]{
		CacheSyncTimeout: o.CacheSyncTimeout,
		Log:              o.Log,
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

// ListClusters returns the names of the engaged clusters, sorted; the name multicluster-runtime's
// Cluster API provider uses for ClusterNames.
func (p *Provider) ListClusters() []multicluster.ClusterName {
	return p.ClusterNames()
}

// Start watches the host's Clusters and kubeconfig Secrets and engages a cluster with aware for
// every ready one, until ctx ends; then it disengages every cluster and returns. It fails when
// the host's informers do not sync within Options.CacheSyncTimeout (for example because the
// Cluster API CRDs are not installed), when the host cluster built by New stops, and when called
// twice. The manager calls Start; users do not.
func (p *Provider) Start(ctx context.Context, aware multicluster.Aware) error {
	p.mu.Lock()
	if p.started {
		p.mu.Unlock()
		return errors.New("clusterapi provider: Start called twice")
	}
	p.started = true
	p.mu.Unlock()

	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	errHostStopped := errors.New("clusterapi provider: the host cluster stopped")
	if p.ownHost {
		wg.Go(func() {
			err := p.host.Start(ctx)
			if ctx.Err() == nil {
				cancel(fmt.Errorf("%w: %v", errHostStopped, err))
			}
		})
	}

	p.aware = aware
	p.recorder = p.opts.EventRecorder
	if p.recorder == nil {
		p.recorder = p.host.GetEventRecorder(EventSource)
	}
	p.queue = workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[types.NamespacedName](p.opts.RetryMinDelay, p.opts.RetryMaxDelay),
		workqueue.TypedRateLimitingQueueConfig[types.NamespacedName]{Name: "clusterapi-provider"})
	defer p.queue.ShutDown()

	stopWatching, err := p.watch(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return stopCause(ctx, errHostStopped)
		}
		return err
	}
	defer stopWatching()

	wg.Go(func() { p.resync(ctx) })

	// The queue hands out each Cluster to one goroutine at a time, but Clusters run in parallel
	// without a bound, so that workload clusters that take CacheSyncTimeout to fail never hold
	// up others.
	var running sync.WaitGroup
	context.AfterFunc(ctx, p.queue.ShutDown)
	for {
		key, shutdown := p.queue.Get()
		if shutdown {
			break
		}
		running.Go(func() {
			defer p.queue.Done(key)
			if retry := p.sync(ctx, key); retry && ctx.Err() == nil {
				p.queue.AddRateLimited(key)
				return
			}
			p.queue.Forget(key)
		})
	}
	running.Wait()
	p.RemoveAll()
	p.mu.Lock()
	for _, st := range p.states {
		if st.broken {
			BrokenClusters.Dec()
		}
	}
	p.states = map[types.NamespacedName]*clusterState{}
	p.mu.Unlock()
	return stopCause(ctx, errHostStopped)
}

// stopCause returns the error Start returns once ctx has ended: nil when its parent ended, the
// cause when the host cluster stopped.
func stopCause(ctx context.Context, errHostStopped error) error {
	if cause := context.Cause(ctx); errors.Is(cause, errHostStopped) {
		return cause
	}
	return nil
}

// watch registers the provider's event handlers on the host's Cluster and Secret informers and
// waits, at most Options.CacheSyncTimeout, until they have seen every existing object. The
// returned func removes the handlers.
func (p *Provider) watch(ctx context.Context) (stop func(), err error) {
	waitCtx, cancel := context.WithTimeout(ctx, p.opts.CacheSyncTimeout)
	defer cancel()

	var stops []func()
	stop = func() {
		for _, s := range stops {
			s()
		}
	}
	// A shared host cache (NewForHost) may hold namespaces the provider does not serve.
	inNamespaces := func(ns string) bool {
		return len(p.opts.Namespaces) == 0 || slices.Contains(p.opts.Namespaces, ns)
	}
	enqueueCluster := func(obj any) {
		if o, ok := objectOf(obj); ok && inNamespaces(o.GetNamespace()) {
			p.queue.Add(types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()})
		}
	}
	enqueueSecret := func(obj any) {
		if o, ok := objectOf(obj); ok && inNamespaces(o.GetNamespace()) {
			if key, ok := clusterOfSecret(o.GetNamespace(), o.GetName()); ok {
				p.queue.Add(key)
			}
		}
	}
	for _, w := range []struct {
		obj     client.Object
		enqueue func(any)
	}{
		{p.opts.APIVersion.newObject(), enqueueCluster},
		{&corev1.Secret{}, enqueueSecret},
	} {
		kind := fmt.Sprintf("%T", w.obj)
		informer, err := p.host.GetCache().GetInformer(waitCtx, w.obj, cache.BlockUntilSynced(false))
		if err != nil {
			stop()
			return nil, fmt.Errorf("clusterapi provider: getting the host's informer for %s (are the Cluster API CRDs installed, and the type in the host's scheme?): %w", kind, err)
		}
		reg, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    w.enqueue,
			UpdateFunc: func(_, newObj any) { w.enqueue(newObj) },
			DeleteFunc: w.enqueue,
		})
		if err != nil {
			stop()
			return nil, fmt.Errorf("clusterapi provider: watching the host's %s: %w", kind, err)
		}
		stops = append(stops, func() { _ = informer.RemoveEventHandler(reg) })
		if !waitFor(waitCtx, reg.HasSynced) {
			stop()
			if ctx.Err() != nil {
				return nil, fmt.Errorf("clusterapi provider: waiting for the host's %s: %w", kind, context.Cause(ctx))
			}
			return nil, fmt.Errorf("clusterapi provider: the host's %s did not sync within %s (are the Cluster API CRDs installed, and does the provider have list and watch permission?)", kind, p.opts.CacheSyncTimeout)
		}
	}
	return stop, nil
}

// objectOf returns the object of an informer notification, unwrapping deletion tombstones.
func objectOf(obj any) (client.Object, bool) {
	if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	o, ok := obj.(client.Object)
	return o, ok
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

// resync queues every known Cluster each Options.ResyncPeriod until ctx ends.
func (p *Provider) resync(ctx context.Context) {
	tick := time.NewTicker(p.opts.ResyncPeriod)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		p.mu.Lock()
		keys := make([]types.NamespacedName, 0, len(p.states))
		for key := range p.states {
			keys = append(keys, key)
		}
		p.mu.Unlock()
		for _, key := range keys {
			p.queue.Add(key)
		}
	}
}
