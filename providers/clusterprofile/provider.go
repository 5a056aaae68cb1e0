package clusterprofile

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

	"sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/cluster-inventory-api/pkg/access"

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
	DefaultUnreadyGracePeriod = time.Minute
	DefaultRetryMinDelay      = time.Second
	DefaultRetryMaxDelay      = 5 * time.Minute
	DefaultResyncPeriod       = 10 * time.Minute
)

// SecretStrategy configures the deprecated Secret strategy of the Cluster Inventory API: the
// kubeconfig of a ClusterProfile is the "Config" data of the one Secret in the profile's
// namespace labeled x-k8s.io/cluster-inventory-consumer=<ConsumerName> and
// x-k8s.io/cluster-profile=<profile name>.
type SecretStrategy struct {
	// ConsumerName is the value of the x-k8s.io/cluster-inventory-consumer label, the name
	// under which the cluster manager provisions kubeconfigs for this controller. Required.
	ConsumerName string
}

// Options configures a Provider. The zero value of every field selects its default; defaults are
// applied in one place, Options.withDefaults. At least one of AccessProviders and Secret must be
// set.
type Options struct {
	// AccessProviders is the operator's KEP-5339 access provider configuration, usually loaded
	// with RegisterProviderFileFlag or LoadProviderFile. A profile is reached through the first
	// provider (in this order) that its status.accessProviders (or the deprecated
	// status.credentialProviders) lists: a rest.Config for the listed server and CA whose
	// credentials come from the provider's exec plugin. Profile-sourced plugin args and env
	// are used only as each provider's policies allow (default: ignored). New validates it
	// (ValidateProviderConfig) and keeps a deep copy.
	//
	// Defaults to nil: the access-provider strategy is off.
	AccessProviders *access.Config

	// Secret turns on the deprecated Secret strategy, used for profiles that list no access
	// provider of AccessProviders (or for all, without AccessProviders). The kubeconfig is
	// loaded under Policy.
	//
	// Defaults to nil: off, and the provider neither reads nor caches Secrets.
	Secret *SecretStrategy

	// Namespaces restricts the provider to ClusterProfiles (and kubeconfig Secrets) in these
	// namespaces; the provider's host cache holds only these namespaces, so Roles in them are
	// enough RBAC.
	//
	// Defaults to none: every namespace.
	Namespaces []string

	// Selector selects ClusterProfiles by label, e.g. x-k8s.io/cluster-manager=<name>. A profile
	// whose labels stop matching is disengaged.
	//
	// Defaults to nil: every ClusterProfile.
	Selector labels.Selector

	// Filter is a predicate on the ClusterProfile, evaluated after Namespaces and Selector each
	// time the profile changes. A profile it stops selecting is disengaged. It must be quick and
	// must not block.
	//
	// Defaults to nil: every ClusterProfile.
	Filter func(ctx context.Context, cp *v1alpha1.ClusterProfile) bool

	// IsReady reports whether a selected ClusterProfile is ready to be engaged. An engaged
	// profile that stops being ready stays engaged for UnreadyGracePeriod and is disengaged if
	// it is still unready then; it is engaged again once ready. It must be quick and must not
	// block.
	//
	// Defaults to ControlPlaneHealthy (the ControlPlaneHealthy condition is True); see also
	// ConditionsTrue and Always.
	IsReady func(ctx context.Context, cp *v1alpha1.ClusterProfile) bool

	// UnreadyGracePeriod is how long an engaged cluster whose profile became unready stays
	// engaged, so that a blip of the cluster manager's health reporting does not restart every
	// controller on the cluster. A negative value disengages at once.
	//
	// Defaults to DefaultUnreadyGracePeriod (1m).
	UnreadyGracePeriod time.Duration

	// Policy says what the data of the cluster inventory may ask for. For the Secret strategy
	// it is the kubeconfig policy of mcr.dev/core/kubeconfig. For access providers, whose exec
	// plugins come from the operator's file and so are always allowed, it governs the
	// profile-sourced cluster fields: insecure-skip-tls-verify needs AllowInsecure and
	// certificate-authority (a file path) AllowLocalFiles.
	//
	// Defaults to the zero kubeconfig.Policy: no exec or auth-provider plugins in Secrets, no
	// local file references, no insecure-skip-tls-verify.
	Policy kubeconfig.Policy

	// RESTOptions change each member's rest.Config before its cluster is built, in order; an
	// error is reported like an invalid access provider or kubeconfig.
	//
	// Defaults to none. Configs that set neither QPS nor Burst get 20 and 30 first.
	RESTOptions []func(*rest.Config) error

	// ClusterOptions are passed to cluster.New for every member (scheme, cache options, ...).
	//
	// Defaults to none: the client-go scheme and a cache of all namespaces.
	ClusterOptions []cluster.Option

	// HostClusterOptions are passed to cluster.New for the host (hub) cluster that New builds,
	// after the provider's own (scheme with the ClusterProfile type; cache restricted to
	// Namespaces and, with Secret, to the consumer's labeled Secrets).
	//
	// Defaults to none.
	HostClusterOptions []cluster.Option

	// CacheSyncTimeout bounds, for each member, the access check (which runs the exec plugin)
	// and the wait for its cache to sync; a member that exceeds it gets a ClusterUnreachable
	// Event and is retried with backoff while the others carry on. It also bounds the wait for
	// the host's informers in Start.
	//
	// Defaults to clusters.DefaultCacheSyncTimeout (one minute).
	CacheSyncTimeout time.Duration

	// RetryMinDelay and RetryMaxDelay bound the exponential backoff with which a profile that
	// could not be reached or engaged is retried. Profiles whose access provider or kubeconfig
	// is refused are not retried: the next change of the profile or Secret is.
	//
	// Default to DefaultRetryMinDelay (1s) and DefaultRetryMaxDelay (5m).
	RetryMinDelay time.Duration
	RetryMaxDelay time.Duration

	// ResyncPeriod is how often every profile is checked again without any change: a safety
	// net that also engages again a cluster whose cache stopped on its own. Unchanged
	// credentials cost a hash comparison, nothing more.
	//
	// Defaults to DefaultResyncPeriod (10m).
	ResyncPeriod time.Duration

	// EventRecorder records Events on ClusterProfiles.
	//
	// Defaults to the host cluster's recorder (events.k8s.io/v1 Events, reporting controller
	// EventSource).
	EventRecorder events.EventRecorder

	// Log receives the provider's messages, with the cluster under the key "cluster".
	// Credentials are never logged.
	//
	// Defaults to controller-runtime's logger named "clusterprofile-provider".
	Log logr.Logger
}

// withDefaults is the only place defaults are applied.
func (o Options) withDefaults() Options {
	if o.IsReady == nil {
		o.IsReady = ControlPlaneHealthy
	}
	if o.UnreadyGracePeriod == 0 {
		o.UnreadyGracePeriod = DefaultUnreadyGracePeriod
	}
	if o.UnreadyGracePeriod < 0 {
		o.UnreadyGracePeriod = 0
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
		o.Log = ctrllog.Log.WithName("clusterprofile-provider")
	}
	return o
}

// validate reports options that cannot work.
func (o Options) validate() error {
	var errs []error
	if o.AccessProviders == nil && o.Secret == nil {
		errs = append(errs, errors.New("set Options.AccessProviders (KEP-5339 access providers) or Options.Secret (the deprecated Secret strategy)"))
	}
	if o.AccessProviders != nil {
		errs = append(errs, ValidateProviderConfig(o.AccessProviders))
	}
	if o.Secret != nil && o.Secret.ConsumerName == "" {
		errs = append(errs, errors.New("Options.Secret.ConsumerName is empty"))
	}
	return errors.Join(errs...)
}

// Provider engages one cluster for every ready ClusterProfile on a hub (host) cluster. Create it
// with New and hand it to the manager, which calls Start.
type Provider struct {
	// The embedded set supplies Get, IndexField and ClusterNames.
	clusters.Clusters[cluster.Cluster]

	opts Options
	host cluster.Cluster
	log  logr.Logger

	mu         sync.Mutex
	started    bool
	states     map[types.NamespacedName]*profileState
	identities map[multicluster.ClusterName]Identity

	// Set by Start before any sync runs.
	aware    multicluster.Aware
	queue    workqueue.TypedRateLimitingInterface[types.NamespacedName]
	recorder events.EventRecorder
}

// profileState is what the provider remembers about one ClusterProfile. Only the sync of that
// profile touches it (the queue runs one sync per profile at a time); the map holding it is
// guarded by Provider.mu.
type profileState struct {
	// engaged is the instance engaged for the profile, hash the content hash of its
	// credentials.
	engaged cluster.Cluster
	hash    string
	// problem is the reported problem, broken whether it counts in BrokenClusters.
	problem string
	broken  bool
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
// labeled for Options.Secret.ConsumerName. It needs the RBAC in README.md and nothing else.
func New(hostConfig *rest.Config, opts Options) (*Provider, error) {
	if hostConfig == nil {
		return nil, errors.New("clusterprofile provider: host config is nil")
	}
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("clusterprofile provider: %w", err)
	}
	o := opts.withDefaults()
	if o.AccessProviders != nil {
		o.AccessProviders = copyProviderConfig(o.AccessProviders)
	}
	o.Namespaces = slices.Clone(o.Namespaces)
	p := &Provider{
		opts:       o,
		log:        o.Log,
		states:     map[types.NamespacedName]*profileState{},
		identities: map[multicluster.ClusterName]Identity{},
	}
	p.Options = clusters.Options[cluster.Cluster]{
		CacheSyncTimeout: o.CacheSyncTimeout,
		Log:              o.Log,
		// The provider replaces an engaged cluster only when the content hash of its
		// credentials changed, so every replacement it asks for is a real one.
		EqualClusters: func(_, _ cluster.Cluster) bool { return false },
	}

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("clusterprofile provider: %w", err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("clusterprofile provider: %w", err)
	}
	hostOpts := append([]cluster.Option{func(co *cluster.Options) {
		co.Scheme = scheme
		co.Logger = p.log.WithName("host")
		if len(o.Namespaces) > 0 {
			co.Cache.DefaultNamespaces = map[string]cache.Config{}
			for _, ns := range o.Namespaces {
				co.Cache.DefaultNamespaces[ns] = cache.Config{}
			}
		}
		if o.Secret != nil {
			co.Cache.ByObject = map[client.Object]cache.ByObject{
				&corev1.Secret{}: {
					Label:     labels.SelectorFromSet(labels.Set{SecretLabelConsumer: o.Secret.ConsumerName}),
					Transform: dropManagedFields,
				},
			}
		}
	}}, o.HostClusterOptions...)
	host, err := cluster.New(hostConfig, hostOpts...)
	if err != nil {
		return nil, fmt.Errorf("clusterprofile provider: creating the host cluster: %w", err)
	}
	p.host = host
	return p, nil
}

// dropManagedFields keeps cached objects small.
func dropManagedFields(obj any) (any, error) {
	if o, ok := obj.(client.Object); ok {
		o.SetManagedFields(nil)
	}
	return obj, nil
}

// ListClusters returns the names of the engaged clusters, sorted.
func (p *Provider) ListClusters() []multicluster.ClusterName {
	return p.ClusterNames()
}

// Start watches the hub's ClusterProfiles (and, with the Secret strategy, kubeconfig Secrets)
// and engages a cluster with aware for every ready one, until ctx ends; then it disengages every
// cluster and returns. It fails when the host's informers do not sync within
// Options.CacheSyncTimeout (for example because the ClusterProfile CRD is not installed), when
// the host cluster stops, and when called twice. The manager calls Start; users do not.
func (p *Provider) Start(ctx context.Context, aware multicluster.Aware) error {
	p.mu.Lock()
	if p.started {
		p.mu.Unlock()
		return errors.New("clusterprofile provider: Start called twice")
	}
	p.started = true
	p.mu.Unlock()

	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	errHostStopped := errors.New("clusterprofile provider: the host cluster stopped")
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
		workqueue.TypedRateLimitingQueueConfig[types.NamespacedName]{Name: "clusterprofile-provider"})
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

	// The queue hands out each profile to one goroutine at a time, but profiles run in
	// parallel without a bound, so that members that take CacheSyncTimeout to fail (or plugins
	// that are slow) never hold up others.
	var running sync.WaitGroup
	context.AfterFunc(ctx, p.queue.ShutDown)
	for {
		key, shutdown := p.queue.Get()
		if shutdown {
			break
		}
		running.Go(func() {
			defer p.queue.Done(key)
			res := p.sync(ctx, key)
			switch {
			case ctx.Err() != nil:
				p.queue.Forget(key)
			case res.retry:
				p.queue.AddRateLimited(key)
			case res.after > 0:
				p.queue.Forget(key)
				p.queue.AddAfter(key, res.after)
			default:
				p.queue.Forget(key)
			}
		})
	}
	running.Wait()
	p.RemoveAll()
	p.mu.Lock()
	for _, st := range p.states {
		if st.broken {
			BrokenClusters.Dec()
		}
		if !st.unreadySince.IsZero() {
			UnreadyEngagedClusters.Dec()
		}
	}
	p.states = map[types.NamespacedName]*profileState{}
	p.identities = map[multicluster.ClusterName]Identity{}
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

// watch registers the provider's event handlers on the host's ClusterProfile (and Secret)
// informers and waits, at most Options.CacheSyncTimeout, until they have seen every existing
// object. The returned func removes the handlers.
func (p *Provider) watch(ctx context.Context) (stop func(), err error) {
	waitCtx, cancel := context.WithTimeout(ctx, p.opts.CacheSyncTimeout)
	defer cancel()

	var stops []func()
	stop = func() {
		for _, s := range stops {
			s()
		}
	}
	enqueueProfile := func(obj any) {
		if o, ok := objectOf(obj); ok {
			p.queue.Add(types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()})
		}
	}
	enqueueSecret := func(obj any) {
		if o, ok := objectOf(obj); ok {
			if name := o.GetLabels()[SecretLabelProfile]; name != "" {
				p.queue.Add(types.NamespacedName{Namespace: o.GetNamespace(), Name: name})
			}
		}
	}
	type watched struct {
		obj     client.Object
		enqueue func(any)
	}
	list := []watched{{&v1alpha1.ClusterProfile{}, enqueueProfile}}
	if p.opts.Secret != nil {
		list = append(list, watched{&corev1.Secret{}, enqueueSecret})
	}
	for _, w := range list {
		kind := fmt.Sprintf("%T", w.obj)
		informer, err := p.host.GetCache().GetInformer(waitCtx, w.obj, cache.BlockUntilSynced(false))
		if err != nil {
			stop()
			return nil, fmt.Errorf("clusterprofile provider: getting the host's informer for %s (is the ClusterProfile CRD installed?): %w", kind, err)
		}
		reg, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc: w.enqueue,
			UpdateFunc: func(oldObj, newObj any) {
				// A Secret whose profile label changed concerns both profiles.
				w.enqueue(oldObj)
				w.enqueue(newObj)
			},
			DeleteFunc: w.enqueue,
		})
		if err != nil {
			stop()
			return nil, fmt.Errorf("clusterprofile provider: watching the host's %s: %w", kind, err)
		}
		stops = append(stops, func() { _ = informer.RemoveEventHandler(reg) })
		if !waitFor(waitCtx, reg.HasSynced) {
			stop()
			if ctx.Err() != nil {
				return nil, fmt.Errorf("clusterprofile provider: waiting for the host's %s: %w", kind, context.Cause(ctx))
			}
			return nil, fmt.Errorf("clusterprofile provider: the host's %s did not sync within %s (is the ClusterProfile CRD installed, and does the provider have list and watch permission?)", kind, p.opts.CacheSyncTimeout)
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

// resync queues every known profile each Options.ResyncPeriod until ctx ends.
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
