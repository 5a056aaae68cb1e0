package gardener

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
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

	authenticationv1alpha1 "github.com/gardener/gardener/pkg/apis/authentication/v1alpha1"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"mcr.dev/core/clusters"
	"mcr.dev/core/kubeconfig"
	"mcr.dev/core/multicluster"
)

var (
	_ multicluster.Provider         = &Provider{}
	_ multicluster.ProviderRunnable = &Provider{}
)

// Topology says which Gardener cluster the provider runs against, and so what it watches.
type Topology string

const (
	// TopologyGarden runs against the garden cluster (the Gardener API): it engages one cluster
	// per usable Shoot, with short-lived admin credentials from the Shoot's adminkubeconfig
	// subresource. It is the default.
	TopologyGarden Topology = "garden"

	// TopologySeed runs against a seed cluster: it engages one cluster per
	// extensions.gardener.cloud Cluster object (one per shoot control plane the seed hosts),
	// with the kubeconfig of the Secret "gardener" in the shoot's control-plane namespace.
	TopologySeed Topology = "seed"
)

func (t Topology) validate() error {
	switch t {
	case TopologyGarden, TopologySeed:
		return nil
	}
	return fmt.Errorf("unknown Topology %q (want %q or %q)", t, TopologyGarden, TopologySeed)
}

// Defaults of Options.
const (
	// DefaultExpirationSeconds is the lifetime requested for admin credentials (one hour, the
	// default of the Gardener API too).
	DefaultExpirationSeconds int64 = 3600

	// MinExpirationSeconds is the shortest lifetime Gardener accepts for admin credentials (ten
	// minutes); New refuses less.
	MinExpirationSeconds int64 = 600

	// DefaultRefreshFraction is the share of the credentials' lifetime after which they are
	// renewed.
	DefaultRefreshFraction = 0.8

	DefaultRetryMinDelay = time.Second
	DefaultRetryMaxDelay = 5 * time.Minute
	DefaultResyncPeriod  = 10 * time.Minute
)

// Options configures a Provider. The zero value of every field selects its default; defaults are
// applied in one place, Options.withDefaults.
type Options struct {
	// Topology selects what the provider watches: Shoots on a garden cluster, or extensions
	// Cluster objects on a seed cluster.
	//
	// Defaults to TopologyGarden.
	Topology Topology

	// Namespaces restricts the provider to Shoots of these garden namespaces (project namespaces,
	// "garden-<project>"). With TopologyGarden, the provider's cache holds only these namespaces,
	// so Roles in them are enough RBAC. With TopologySeed it selects the Cluster objects whose
	// embedded Shoot lives in one of them.
	//
	// Defaults to none: every namespace.
	Namespaces []string

	// Selector selects Shoots by label (with TopologySeed: the labels of the Shoot embedded in
	// the Cluster object). A Shoot whose labels stop matching is disengaged.
	//
	// Defaults to nil: every Shoot.
	Selector labels.Selector

	// Filter is a predicate on the Shoot (with TopologySeed: the Shoot embedded in the Cluster
	// object), evaluated after Namespaces and Selector each time the object changes. A Shoot it
	// stops selecting is disengaged. It must be quick and must not block.
	//
	// Defaults to nil: every Shoot.
	Filter func(ctx context.Context, shoot *gardencorev1beta1.Shoot) bool

	// IsUsable reports whether a selected Shoot can be engaged. A Shoot that stops being usable
	// is disengaged at once (no grace period) and engaged again, with fresh credentials, when
	// it is usable again. It must be quick and must not block.
	//
	// Defaults to ShootUsable with TopologyGarden and to ShootAwake with TopologySeed, whose
	// Cluster objects carry a copy of the Shoot's status that is only refreshed when gardenlet
	// reconciles the Shoot.
	IsUsable func(ctx context.Context, shoot *gardencorev1beta1.Shoot) bool

	// ExpirationSeconds is the lifetime the provider requests for admin credentials
	// (AdminKubeconfigRequest spec.expirationSeconds). Gardener may issue shorter ones (its
	// operators cap the lifetime); the provider always goes by the returned
	// status.expirationTimestamp. Used with TopologyGarden only.
	//
	// Defaults to DefaultExpirationSeconds (3600). New fails for less than MinExpirationSeconds
	// (600), which Gardener refuses.
	ExpirationSeconds int64

	// RefreshFraction is the share of the credentials' lifetime after which the provider
	// requests new ones and engages the cluster again with them; the old instance is
	// disengaged once the new one is engaged, well before the old credentials expire. Must be
	// greater than 0 and less than 1. Used with TopologyGarden only.
	//
	// Defaults to DefaultRefreshFraction (0.8): with one-hour credentials, every 48 minutes.
	RefreshFraction float64

	// Policy says what a kubeconfig may contain. Gardener's kubeconfigs carry inline
	// certificates or tokens, which the zero Policy accepts; one that breaks it gets an
	// InvalidKubeconfig Event naming the offending field and the Policy field that allows it.
	//
	// Defaults to the zero kubeconfig.Policy (mcr.dev/core/kubeconfig): no exec or
	// auth-provider plugins, no local file references, no insecure-skip-tls-verify.
	Policy kubeconfig.Policy

	// RESTOptions change each shoot cluster's rest.Config before its cluster is built, in order;
	// an error is reported like an invalid kubeconfig.
	//
	// Defaults to none. Configs that set neither QPS nor Burst get 20 and 30 first.
	RESTOptions []func(*rest.Config) error

	// ClusterOptions are passed to cluster.New for every shoot cluster (scheme, cache options,
	// ...).
	//
	// Defaults to none: the client-go scheme and a cache of all namespaces.
	ClusterOptions []cluster.Option

	// HostClusterOptions are passed to cluster.New for the garden or seed cluster the provider
	// watches, after the provider's own (a scheme with the Gardener types, a cache restricted
	// to what the provider reads).
	//
	// Defaults to none.
	HostClusterOptions []cluster.Option

	// CacheSyncTimeout bounds, for each shoot cluster, the access check and the wait for its
	// cache to sync; a cluster that exceeds it gets a ClusterUnreachable Event and is retried
	// with backoff while the others carry on. It also bounds the wait for the host's informers
	// in Start and each adminkubeconfig request.
	//
	// Defaults to clusters.DefaultCacheSyncTimeout (one minute).
	CacheSyncTimeout time.Duration

	// RetryMinDelay and RetryMaxDelay bound the exponential backoff with which a Shoot that
	// could not get credentials, be reached or be engaged is retried. Kubeconfigs that are
	// missing or refused are not retried: the next change of their source is.
	//
	// Default to DefaultRetryMinDelay (1s) and DefaultRetryMaxDelay (5m).
	RetryMinDelay time.Duration
	RetryMaxDelay time.Duration

	// ResyncPeriod is how often every known Shoot is checked again without any change: a
	// safety net that also engages again a cluster whose cache stopped on its own. It costs a
	// hash comparison per Shoot, no request to Gardener.
	//
	// Defaults to DefaultResyncPeriod (10m).
	ResyncPeriod time.Duration

	// EventRecorder records Events on Shoots (TopologyGarden) or Cluster objects
	// (TopologySeed).
	//
	// Defaults to the host cluster's recorder (events.k8s.io/v1 Events, reporting controller
	// EventSource).
	EventRecorder events.EventRecorder

	// Log receives the provider's messages, with the cluster under the key "cluster".
	// Credentials are never logged.
	//
	// Defaults to controller-runtime's logger named "gardener-provider".
	Log logr.Logger
}

// withDefaults is the only place defaults are applied.
func (o Options) withDefaults() Options {
	if o.Topology == "" {
		o.Topology = TopologyGarden
	}
	if o.IsUsable == nil {
		if o.Topology == TopologySeed {
			o.IsUsable = ShootAwake
		} else {
			o.IsUsable = ShootUsable
		}
	}
	if o.ExpirationSeconds == 0 {
		o.ExpirationSeconds = DefaultExpirationSeconds
	}
	if o.RefreshFraction == 0 {
		o.RefreshFraction = DefaultRefreshFraction
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
		o.Log = ctrllog.Log.WithName("gardener-provider")
	}
	return o
}

func (o Options) validate() error {
	if err := o.Topology.validate(); err != nil {
		return err
	}
	if o.ExpirationSeconds < MinExpirationSeconds {
		return fmt.Errorf("Options.ExpirationSeconds is %d, Gardener refuses less than %d", o.ExpirationSeconds, MinExpirationSeconds)
	}
	if o.RefreshFraction <= 0 || o.RefreshFraction >= 1 {
		return fmt.Errorf("Options.RefreshFraction is %v, want more than 0 and less than 1", o.RefreshFraction)
	}
	return nil
}

// Provider engages one cluster for every usable Shoot of a garden cluster, or for every shoot
// control plane of a seed cluster (Options.Topology). Create it with New and hand it to the
// manager, which calls Start.
type Provider struct {
	// The embedded set supplies Get, IndexField and ClusterNames.
	clusters.Clusters[cluster.Cluster]

	opts Options
	host cluster.Cluster
	log  logr.Logger
	// defaultUsable says that Options.IsUsable is the default, whose reasons can be logged.
	defaultUsable bool

	mu      sync.Mutex
	started bool
	states  map[types.NamespacedName]*memberState

	// Set by Start before any sync runs.
	aware    multicluster.Aware
	queue    workqueue.TypedRateLimitingInterface[types.NamespacedName]
	recorder events.EventRecorder
}

// memberState is what the provider remembers about one Shoot or Cluster object. Only the sync
// of that object touches it (the queue runs one sync per object at a time).
type memberState struct {
	// engaged is the instance engaged for the object, hash the content hash of its
	// kubeconfig and expires when its credentials expire (zero: not known to expire).
	engaged cluster.Cluster
	hash    string
	expires time.Time
	// creds are the latest admin credentials fetched for a Shoot (garden only); they may be
	// newer than the engaged ones when engaging with them failed.
	creds *adminCredentials
	// rejected is the hash of a kubeconfig refused for good (policy, decoding), so that seeing
	// it again neither retries nor repeats the Event.
	rejected string
	// problem is the reported problem, broken whether it counts in BrokenClusters.
	problem string
	broken  bool
}

// New returns a provider that watches the garden or seed cluster hostConfig points at
// (Options.Topology). It builds its own host cluster, which Start runs, with a cache that holds
// only what the provider reads: Shoots of Options.Namespaces (garden), or Cluster objects and
// the Secrets named "gardener" (seed, keeping only their kubeconfig). It needs the RBAC in
// README.md and nothing else.
func New(hostConfig *rest.Config, opts Options) (*Provider, error) {
	if hostConfig == nil {
		return nil, errors.New("gardener provider: host config is nil")
	}
	o := opts.withDefaults()
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("gardener provider: %w", err)
	}
	p := &Provider{
		opts:          o,
		log:           o.Log.WithValues("topology", string(o.Topology)),
		defaultUsable: opts.IsUsable == nil,
		states:        map[types.NamespacedName]*memberState{},
	}
	p.Options = clusters.Options[cluster.Cluster]{
		CacheSyncTimeout: o.CacheSyncTimeout,
		Log:              p.log,
	}

	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme,
		gardencorev1beta1.AddToScheme,
		authenticationv1alpha1.AddToScheme,
		extensionsv1alpha1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			return nil, fmt.Errorf("gardener provider: %w", err)
		}
	}
	hostOpts := append([]cluster.Option{func(co *cluster.Options) {
		co.Scheme = scheme
		co.Logger = p.log.WithName("host")
		switch o.Topology {
		case TopologyGarden:
			if len(o.Namespaces) > 0 {
				co.Cache.DefaultNamespaces = map[string]cache.Config{}
				for _, ns := range o.Namespaces {
					co.Cache.DefaultNamespaces[ns] = cache.Config{}
				}
			}
			co.Cache.ByObject = map[client.Object]cache.ByObject{
				&gardencorev1beta1.Shoot{}: {Transform: dropManagedFields},
			}
		case TopologySeed:
			co.Cache.ByObject = map[client.Object]cache.ByObject{
				&extensionsv1alpha1.Cluster{}: {Transform: dropManagedFields},
				&corev1.Secret{}: {
					Field:     fields.OneTermEqualSelector("metadata.name", SeedSecretName),
					Transform: keepKubeconfigOnly,
				},
			}
		}
	}}, o.HostClusterOptions...)
	host, err := cluster.New(hostConfig, hostOpts...)
	if err != nil {
		return nil, fmt.Errorf("gardener provider: creating the host cluster: %w", err)
	}
	p.host = host
	return p, nil
}

// dropManagedFields keeps the provider's cache small: it never reads managed fields.
func dropManagedFields(obj any) (any, error) {
	if o, ok := obj.(client.Object); ok {
		o.SetManagedFields(nil)
	}
	return obj, nil
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

// ListClusters returns the names of the engaged clusters, sorted.
func (p *Provider) ListClusters() []multicluster.ClusterName {
	return p.ClusterNames()
}

// Start watches the host cluster and engages a cluster with aware for every usable Shoot (or
// seed Cluster object), until ctx ends; then it disengages every cluster and returns. It fails
// when the host's informers do not sync within Options.CacheSyncTimeout (for example because the
// Gardener API or the Cluster CRD is not there), when the host cluster stops, and when called
// twice. The manager calls Start; users do not.
func (p *Provider) Start(ctx context.Context, aware multicluster.Aware) error {
	p.mu.Lock()
	if p.started {
		p.mu.Unlock()
		return errors.New("gardener provider: Start called twice")
	}
	p.started = true
	p.mu.Unlock()

	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	errHostStopped := errors.New("gardener provider: the host cluster stopped")
	wg.Go(func() {
		err := p.host.Start(ctx)
		if ctx.Err() == nil {
			cancel(fmt.Errorf("%w: %v", errHostStopped, err))
		}
	})

	p.aware = aware
	p.recorder = p.opts.EventRecorder
	if p.recorder == nil {
		p.recorder = p.host.GetEventRecorder(EventSource)
	}
	p.queue = workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[types.NamespacedName](p.opts.RetryMinDelay, p.opts.RetryMaxDelay),
		workqueue.TypedRateLimitingQueueConfig[types.NamespacedName]{Name: "gardener-provider"})
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

	// The queue hands out each object to one goroutine at a time, but objects run in parallel
	// without a bound, so that shoot clusters that take CacheSyncTimeout to fail never hold up
	// others.
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
	p.states = map[types.NamespacedName]*memberState{}
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

// sync dispatches to the topology's sync.
func (p *Provider) sync(ctx context.Context, key types.NamespacedName) (retry bool) {
	if p.opts.Topology == TopologySeed {
		return p.syncSeedCluster(ctx, key)
	}
	return p.syncShoot(ctx, key)
}

// watch registers the provider's event handlers on the host's informers and waits, at most
// Options.CacheSyncTimeout, until they have seen every existing object. The returned func
// removes the handlers.
func (p *Provider) watch(ctx context.Context) (stop func(), err error) {
	waitCtx, cancel := context.WithTimeout(ctx, p.opts.CacheSyncTimeout)
	defer cancel()

	var stops []func()
	stop = func() {
		for _, s := range stops {
			s()
		}
	}
	type watched struct {
		obj     client.Object
		enqueue func(any)
		hint    string
	}
	var list []watched
	switch p.opts.Topology {
	case TopologyGarden:
		list = []watched{{&gardencorev1beta1.Shoot{}, func(obj any) {
			if o, ok := objectOf(obj); ok && p.inNamespaces(o.GetNamespace()) {
				p.queue.Add(types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()})
			}
		}, "is this a garden cluster, and may the provider list and watch shoots.core.gardener.cloud?"}}
	case TopologySeed:
		list = []watched{
			{&extensionsv1alpha1.Cluster{}, func(obj any) {
				if o, ok := objectOf(obj); ok {
					p.queue.Add(types.NamespacedName{Name: o.GetName()})
				}
			}, "is this a seed cluster with the clusters.extensions.gardener.cloud CRD, and may the provider list and watch them?"},
			{&corev1.Secret{}, func(obj any) {
				if o, ok := objectOf(obj); ok && o.GetName() == SeedSecretName {
					p.queue.Add(types.NamespacedName{Name: o.GetNamespace()})
				}
			}, "may the provider list and watch Secrets?"},
		}
	}
	for _, w := range list {
		kind := fmt.Sprintf("%T", w.obj)
		informer, err := p.host.GetCache().GetInformer(waitCtx, w.obj, cache.BlockUntilSynced(false))
		if err != nil {
			stop()
			return nil, fmt.Errorf("gardener provider: getting the host's informer for %s (%s): %w", kind, w.hint, err)
		}
		reg, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    w.enqueue,
			UpdateFunc: func(_, newObj any) { w.enqueue(newObj) },
			DeleteFunc: w.enqueue,
		})
		if err != nil {
			stop()
			return nil, fmt.Errorf("gardener provider: watching the host's %s: %w", kind, err)
		}
		stops = append(stops, func() { _ = informer.RemoveEventHandler(reg) })
		if !waitFor(waitCtx, reg.HasSynced) {
			stop()
			if ctx.Err() != nil {
				return nil, fmt.Errorf("gardener provider: waiting for the host's %s: %w", kind, context.Cause(ctx))
			}
			return nil, fmt.Errorf("gardener provider: the host's %s did not sync within %s (%s)", kind, p.opts.CacheSyncTimeout, w.hint)
		}
	}
	return stop, nil
}

// inNamespaces reports whether Options.Namespaces selects the garden namespace ns.
func (p *Provider) inNamespaces(ns string) bool {
	return len(p.opts.Namespaces) == 0 || slices.Contains(p.opts.Namespaces, ns)
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

// resync queues every known object each Options.ResyncPeriod until ctx ends.
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
