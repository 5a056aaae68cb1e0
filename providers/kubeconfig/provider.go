package kubeconfig

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
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

const (
	// DefaultNamespace is the default of Options.Namespace.
	DefaultNamespace = "mcr-system"

	// DefaultSecretLabel is the default of Options.SecretLabel. A Secret is picked up when it
	// carries this label with the value "true".
	DefaultSecretLabel = "mcr.dev/kubeconfig"

	// UpstreamSecretLabel is the label multicluster-runtime's kubeconfig provider looks for. Set
	// Options.SecretLabel to it to serve Secrets written for that provider unchanged.
	UpstreamSecretLabel = "sigs.k8s.io/multicluster-runtime-kubeconfig"

	// DefaultSecretKey is the default of Options.SecretKey, the same as multicluster-runtime's.
	DefaultSecretKey = "kubeconfig"

	// DefaultRetryMinDelay is the default of Options.RetryMinDelay.
	DefaultRetryMinDelay = time.Second
	// DefaultRetryMaxDelay is the default of Options.RetryMaxDelay.
	DefaultRetryMaxDelay = 5 * time.Minute

	// EventSource is the reporting controller of the Events the provider records on Secrets.
	EventSource = "mcr.dev/kubeconfig-provider"

	// labelValue is the value of the Secret label that selects a Secret.
	labelValue = "true"

	// defaultQPS and defaultBurst apply to member configs that set neither, as
	// controller-runtime's config loader does for the host.
	defaultQPS   = 20
	defaultBurst = 30
)

// Options configures a Provider. The zero value of every field selects its default; defaults are
// applied in one place, Options.withDefaults.
type Options struct {
	// Namespace is the host namespace whose Secrets are watched. Ignored when AllNamespaces is
	// set.
	//
	// Defaults to DefaultNamespace ("mcr-system").
	Namespace string

	// AllNamespaces watches labeled Secrets in every namespace of the host. Anyone who can write
	// Secrets in any namespace can then add clusters; prefer one namespace, and use
	// NamespacedSecretName to keep Secrets of different namespaces from claiming the same name.
	//
	// Defaults to false.
	AllNamespaces bool

	// SecretLabel is the label key that marks a Secret as a member kubeconfig; the value must be
	// "true". Removing the label disengages the cluster.
	//
	// Defaults to DefaultSecretLabel ("mcr.dev/kubeconfig"); UpstreamSecretLabel selects the
	// Secrets of multicluster-runtime's kubeconfig provider.
	SecretLabel string

	// SecretKey is the key in the Secret's data that holds the kubeconfig.
	//
	// Defaults to DefaultSecretKey ("kubeconfig").
	SecretKey string

	// ClusterName derives the cluster name from a Secret. It must depend only on the Secret's
	// namespace, name and labels or annotations that do not change, since a new name means a
	// different cluster: the old name is disengaged and the new one engaged. Two Secrets that map
	// to one name conflict: the first keeps it, the other gets a ClusterNameConflict Event until
	// the first goes away.
	//
	// Defaults to SecretName: the cluster is named after the Secret, as in multicluster-runtime.
	ClusterName func(*corev1.Secret) multicluster.ClusterName

	// Policy says what a kubeconfig may contain. Kubeconfigs that break it are rejected with an
	// InvalidKubeconfig Event on their Secret naming the offending field and the Policy field
	// that allows it.
	//
	// Defaults to the zero kubeconfig.Policy: no exec or auth-provider plugins, no local file
	// references, no insecure-skip-tls-verify.
	Policy kubeconfig.Policy

	// RESTOptions change each member's rest.Config before its cluster is built, in order; an
	// error rejects the Secret.
	//
	// Defaults to none. Members whose config sets neither QPS nor Burst get 20 and 30 first.
	RESTOptions []func(*rest.Config) error

	// ClusterOptions are passed to cluster.New for every member (scheme, cache options, ...).
	//
	// Defaults to none: the client-go scheme and a cache of all namespaces.
	ClusterOptions []cluster.Option

	// HostClusterOptions are passed to cluster.New for the host cluster that New builds. They are
	// applied after the provider's own, which restrict the host cache to labeled Secrets of the
	// watched namespace. Not used with NewForHost.
	//
	// Defaults to none.
	HostClusterOptions []cluster.Option

	// CacheSyncTimeout bounds, for each member, the connectivity check and the wait for its
	// cache to sync; a member that exceeds it gets a ClusterUnreachable Event and is retried with
	// backoff, while the others are engaged meanwhile. It also bounds the wait for the host's
	// Secret informer in Start.
	//
	// Defaults to clusters.DefaultCacheSyncTimeout (one minute).
	CacheSyncTimeout time.Duration

	// SkipConnectivityCheck engages members without first checking, with a SelfSubjectReview,
	// that they answer and accept the credentials. The check needs no RBAC beyond what every
	// authenticated user has.
	//
	// Defaults to false (check).
	SkipConnectivityCheck bool

	// RetryMinDelay and RetryMaxDelay bound the exponential backoff with which a member that
	// could not be reached or engaged is retried. A Secret whose kubeconfig is rejected is not
	// retried: the next change of the Secret is.
	//
	// Default to DefaultRetryMinDelay (1s) and DefaultRetryMaxDelay (5m).
	RetryMinDelay time.Duration
	RetryMaxDelay time.Duration

	// EventRecorder records Events on Secrets.
	//
	// Defaults to a recorder, started by Start and stopped when it returns, that writes
	// events.k8s.io/v1 Events to the host as EventSource.
	EventRecorder events.EventRecorder

	// Log receives the provider's messages, with the cluster under the key "cluster" and the
	// Secret under "secret". Credentials are never logged.
	//
	// Defaults to controller-runtime's logger named "kubeconfig-provider".
	Log logr.Logger
}

// withDefaults is the only place defaults are applied.
func (o Options) withDefaults() Options {
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.SecretLabel == "" {
		o.SecretLabel = DefaultSecretLabel
	}
	if o.SecretKey == "" {
		o.SecretKey = DefaultSecretKey
	}
	if o.ClusterName == nil {
		o.ClusterName = SecretName
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
		o.Log = ctrllog.Log.WithName("kubeconfig-provider")
	}
	return o
}

// SecretName names a cluster after its Secret: "<name>". It is the default of
// Options.ClusterName.
func SecretName(s *corev1.Secret) multicluster.ClusterName {
	return multicluster.ClusterName(s.Name)
}

// NamespacedSecretName names a cluster "<namespace>/<name>" after its Secret, so that Secrets
// of the same name in different namespaces are different clusters. Use it with AllNamespaces.
func NamespacedSecretName(s *corev1.Secret) multicluster.ClusterName {
	return multicluster.ClusterName(s.Namespace + "/" + s.Name)
}

var (
	_ multicluster.Provider         = &Provider{}
	_ multicluster.ProviderRunnable = &Provider{}
)

// Provider engages one cluster for every labeled kubeconfig Secret on a host cluster. Create it
// with New or NewForHost and hand it to the manager, which calls Start.
type Provider struct {
	// The embedded set supplies Get, IndexField and ClusterNames.
	clusters.Clusters[cluster.Cluster]

	opts     Options
	host     cluster.Cluster
	ownHost  bool // New built host, so Start runs it
	selector labels.Selector
	log      logr.Logger

	mu      sync.Mutex
	started bool
	// The fields below are set by Start.
	ctx      context.Context
	aware    multicluster.Aware
	queue    workqueue.TypedRateLimitingInterface[types.NamespacedName]
	recorder events.EventRecorder
	// secrets is what the provider knows about each selected Secret.
	secrets map[types.NamespacedName]*secretState
	// owners says which Secret a cluster name belongs to; waiting lists the Secrets that were
	// refused a name because another Secret owns it, to retry when it is released.
	owners  map[multicluster.ClusterName]types.NamespacedName
	waiting map[multicluster.ClusterName]map[types.NamespacedName]struct{}
}

// New returns a provider that watches kubeconfig Secrets on the host cluster that hostConfig
// points at. It builds its own host cluster whose cache holds only the labeled Secrets of the
// watched namespace, so the provider needs RBAC for nothing else (see README.md), and Start runs
// it.
func New(hostConfig *rest.Config, opts Options) (*Provider, error) {
	if hostConfig == nil {
		return nil, errors.New("kubeconfig provider: host config is nil")
	}
	p := newProvider(opts)
	hostOpts := append([]cluster.Option{func(co *cluster.Options) {
		byObject := cache.ByObject{Label: p.selector}
		if !p.opts.AllNamespaces {
			byObject.Namespaces = map[string]cache.Config{p.opts.Namespace: {}}
		}
		co.Cache.ByObject = map[client.Object]cache.ByObject{&corev1.Secret{}: byObject}
		co.Logger = p.log.WithName("host")
	}}, p.opts.HostClusterOptions...)
	host, err := cluster.New(hostConfig, hostOpts...)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig provider: creating host cluster: %w", err)
	}
	p.host, p.ownHost = host, true
	return p, nil
}

// NewForHost returns a provider that reads Secrets through host's cache, for example the
// manager's own cluster (mgr.GetLocalManager()), to share one Secret informer with other
// controllers. host must be started by its owner; Start only adds an event handler to its Secret
// informer and removes it again when it returns. Note that a default manager cache holds every
// Secret of the cluster, which needs list and watch on Secrets cluster-wide; restrict it with the
// manager's cache options (ByObject for Secrets) to what Options select.
func NewForHost(host cluster.Cluster, opts Options) (*Provider, error) {
	if host == nil {
		return nil, errors.New("kubeconfig provider: host cluster is nil")
	}
	p := newProvider(opts)
	p.host = host
	return p, nil
}

func newProvider(opts Options) *Provider {
	o := opts.withDefaults()
	p := &Provider{
		opts:     o,
		log:      o.Log,
		selector: labels.SelectorFromSet(labels.Set{o.SecretLabel: labelValue}),
		secrets:  map[types.NamespacedName]*secretState{},
		owners:   map[multicluster.ClusterName]types.NamespacedName{},
		waiting:  map[multicluster.ClusterName]map[types.NamespacedName]struct{}{},
	}
	p.Options = clusters.Options[cluster.Cluster]{
		CacheSyncTimeout: o.CacheSyncTimeout,
		Log:              o.Log,
	}
	return p
}

// ListClusters returns the names of the engaged clusters, sorted. It is ClusterNames under the
// name multicluster-runtime's kubeconfig provider uses.
func (p *Provider) ListClusters() []multicluster.ClusterName {
	return p.ClusterNames()
}

// Start watches the host's kubeconfig Secrets and engages a cluster with aware for each, until ctx
// ends; then it disengages every cluster and returns. It fails when the host's Secret informer
// does not sync within Options.CacheSyncTimeout, and when called twice. The manager calls Start;
// users do not.
func (p *Provider) Start(ctx context.Context, aware multicluster.Aware) error {
	p.mu.Lock()
	if p.started {
		p.mu.Unlock()
		return errors.New("kubeconfig provider: Start called twice")
	}
	p.started = true
	p.mu.Unlock()

	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	p.mu.Lock()
	p.ctx, p.aware = ctx, aware
	p.queue = workqueue.NewTypedRateLimitingQueue(
		workqueue.NewTypedItemExponentialFailureRateLimiter[types.NamespacedName](p.opts.RetryMinDelay, p.opts.RetryMaxDelay))
	p.mu.Unlock()
	defer p.queue.ShutDown()

	errHostStopped := errors.New("host cluster stopped")
	if p.ownHost {
		wg.Go(func() {
			err := p.host.Start(ctx)
			if ctx.Err() == nil {
				cancel(fmt.Errorf("kubeconfig provider: %w: %v", errHostStopped, err))
			}
		})
	}

	recorder, stopRecorder, err := p.eventRecorder(ctx)
	if err != nil {
		return err
	}
	defer stopRecorder()
	p.mu.Lock()
	p.recorder = recorder
	p.mu.Unlock()

	stopWatching, err := p.watchSecrets(ctx)
	if err != nil {
		if ctx.Err() != nil { // stopped while starting: not a failure
			return p.stopCause(ctx, errHostStopped)
		}
		return err
	}
	defer stopWatching()

	// The queue hands out each Secret to one goroutine at a time, but Secrets run in parallel
	// without a bound, so that members that take CacheSyncTimeout to fail never hold up others.
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
	return p.stopCause(ctx, errHostStopped)
}

// stopCause returns the error Start returns once ctx has ended: nil when its parent ended, the
// cause when the host cluster stopped.
func (p *Provider) stopCause(ctx context.Context, errHostStopped error) error {
	if cause := context.Cause(ctx); errors.Is(cause, errHostStopped) {
		return cause
	}
	return nil
}
