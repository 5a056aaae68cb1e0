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
	"k8s.io/client-go/tools/events"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"mcr.dev/core/clusters"
	"mcr.dev/core/kubeconfig"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/reconcileloop"
)

var (
	_ multicluster.Provider         = &Provider{}
	_ multicluster.ProviderRunnable = &Provider{}
)

// Defaults of Options.
const (
	DefaultRetryMinDelay = reconcileloop.DefaultRetryMinDelay
	DefaultRetryMaxDelay = reconcileloop.DefaultRetryMaxDelay
	DefaultResyncPeriod  = reconcileloop.DefaultResyncPeriod
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
	reconcileloop.Durations{
		CacheSyncTimeout: &o.CacheSyncTimeout,
		RetryMinDelay:    &o.RetryMinDelay,
		RetryMaxDelay:    &o.RetryMaxDelay,
		ResyncPeriod:     &o.ResyncPeriod,
	}.SetDefaults()
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
	loop     *reconcileloop.Loop[types.NamespacedName]
	events   reconcileloop.Events
	problems reconcileloop.Problems
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
	// problem is the reported problem; while there is one, the Cluster counts in BrokenClusters.
	problem reconcileloop.Problem
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
	p.events.Action = eventAction
	p.problems = reconcileloop.Problems{Subject: "Cluster", Errors: Errors, Broken: BrokenClusters, Events: &p.events}
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

	var ownHost cluster.Cluster
	if p.ownHost {
		ownHost = p.host
	}
	host := reconcileloop.RunHost(ctx, "clusterapi provider", ownHost)
	defer host.Stop()
	ctx = host.Context()

	p.aware = aware
	p.events.Recorder = p.opts.EventRecorder
	if p.events.Recorder == nil {
		p.events.Recorder = p.host.GetEventRecorder(EventSource)
	}
	// Clusters run in parallel without a bound, so that workload clusters that take
	// CacheSyncTimeout to fail never hold up others.
	p.loop = reconcileloop.New(reconcileloop.Options[types.NamespacedName]{
		Name: "clusterapi-provider",
		Sync: func(ctx context.Context, key types.NamespacedName) reconcileloop.Result {
			return reconcileloop.Result{Retry: p.sync(ctx, key)}
		},
		Keys:          p.knownKeys,
		RetryMinDelay: p.opts.RetryMinDelay,
		RetryMaxDelay: p.opts.RetryMaxDelay,
		ResyncPeriod:  p.opts.ResyncPeriod,
	})
	defer p.loop.ShutDown()

	stopWatching, err := p.watch(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return host.Err()
		}
		return err
	}
	defer stopWatching()

	p.loop.Run(ctx)
	p.RemoveAll()
	p.mu.Lock()
	for _, st := range p.states {
		p.problems.Drop(&st.problem)
	}
	p.states = map[types.NamespacedName]*clusterState{}
	p.mu.Unlock()
	return host.Err()
}

// watch registers the provider's event handlers on the host's Cluster and Secret informers and
// waits, at most Options.CacheSyncTimeout, until they have seen every existing object. The
// returned func removes the handlers.
func (p *Provider) watch(ctx context.Context) (stop func(), err error) {
	// A shared host cache (NewForHost) may hold namespaces the provider does not serve.
	inNamespaces := func(ns string) bool {
		return len(p.opts.Namespaces) == 0 || slices.Contains(p.opts.Namespaces, ns)
	}
	const crdHint = "are the Cluster API CRDs installed"
	informerHint := crdHint + ", and the type in the host's scheme?"
	syncHint := crdHint + ", and does the provider have list and watch permission?"
	return reconcileloop.WatchHost(ctx, p.host.GetCache(), "clusterapi provider", p.opts.CacheSyncTimeout,
		reconcileloop.Watch{
			Object: p.opts.APIVersion.newObject(),
			Enqueue: func(o client.Object) {
				if inNamespaces(o.GetNamespace()) {
					p.loop.Add(types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()})
				}
			},
			InformerHint: informerHint,
			SyncHint:     syncHint,
		},
		reconcileloop.Watch{
			Object: &corev1.Secret{},
			Enqueue: func(o client.Object) {
				if !inNamespaces(o.GetNamespace()) {
					return
				}
				if key, ok := clusterOfSecret(o.GetNamespace(), o.GetName()); ok {
					p.loop.Add(key)
				}
			},
			InformerHint: informerHint,
			SyncHint:     syncHint,
		})
}

// knownKeys returns every Cluster the provider knows, for the periodic resync.
func (p *Provider) knownKeys() []types.NamespacedName {
	p.mu.Lock()
	defer p.mu.Unlock()
	keys := make([]types.NamespacedName, 0, len(p.states))
	for key := range p.states {
		keys = append(keys, key)
	}
	return keys
}
