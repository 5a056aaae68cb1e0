package gardener

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
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"

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
	"mcr.dev/core/providers/reconcileloop"
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
	// minutes); New and NewForHost refuse less.
	MinExpirationSeconds int64 = 600

	// DefaultRefreshFraction is the share of the credentials' lifetime after which they are
	// renewed.
	DefaultRefreshFraction = 0.8

	DefaultRetryMinDelay = reconcileloop.DefaultRetryMinDelay
	DefaultRetryMaxDelay = reconcileloop.DefaultRetryMaxDelay
	DefaultResyncPeriod  = reconcileloop.DefaultResyncPeriod
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
	// Defaults to DefaultExpirationSeconds (3600). New and NewForHost fail for less than
	// MinExpirationSeconds (600), which Gardener refuses.
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
	// to what the provider reads). Not used with NewForHost, whose host cluster the caller
	// configures.
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
	reconcileloop.Durations{
		CacheSyncTimeout: &o.CacheSyncTimeout,
		RetryMinDelay:    &o.RetryMinDelay,
		RetryMaxDelay:    &o.RetryMaxDelay,
		ResyncPeriod:     &o.ResyncPeriod,
	}.SetDefaults()
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
// control plane of a seed cluster (Options.Topology). Create it with New or NewForHost and hand
// it to the manager, which calls Start.
type Provider struct {
	// The embedded set supplies Get, IndexField and ClusterNames.
	clusters.Clusters[cluster.Cluster]

	opts    Options
	host    cluster.Cluster
	ownHost bool // New built host, so Start runs it
	log     logr.Logger
	// defaultUsable says that Options.IsUsable is the default, whose reasons can be logged.
	defaultUsable bool

	mu      sync.Mutex
	started bool
	states  map[types.NamespacedName]*memberState

	// Set by Start before any sync runs.
	aware    multicluster.Aware
	loop     *reconcileloop.Loop[types.NamespacedName]
	events   reconcileloop.Events
	problems reconcileloop.Problems
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
	// problem is the reported problem; while there is one, the object counts in BrokenClusters.
	problem reconcileloop.Problem
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
	p, err := newProvider(opts)
	if err != nil {
		return nil, err
	}
	o := p.opts

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
	p.host, p.ownHost = host, true
	return p, nil
}

// NewForHost returns a provider that watches the garden or seed cluster through host, a cluster
// the caller runs, for example the manager's own (mgr.GetLocalManager()), to share its
// informers and client with other controllers. Start does not start host: it waits, at most
// Options.CacheSyncTimeout, for host's informers, adds its event handlers to them and removes
// them when it returns. Options.HostClusterOptions are not used.
//
// host's scheme must hold the types of Options.Topology, or NewForHost fails: for
// TopologyGarden the Shoot (gardencorev1beta1.AddToScheme) and the AdminKubeconfigRequest
// (authenticationv1alpha1.AddToScheme), which the provider POSTs to shoots/adminkubeconfig with
// host's client and REST config; for TopologySeed the extensions Cluster
// (extensionsv1alpha1.AddToScheme) and Secrets (client-go's scheme). host's identity needs the
// RBAC in README.md. Its cache is the caller's: in the seed, a default cache holds every Secret
// of the cluster with its data, so restrict it (cache.Options.ByObject for Secrets, field
// metadata.name=gardener) to what the provider needs; in the garden, it may hold namespaces
// beyond Options.Namespaces, whose Shoots the provider ignores.
func NewForHost(host cluster.Cluster, opts Options) (*Provider, error) {
	if host == nil {
		return nil, errors.New("gardener provider: host cluster is nil")
	}
	p, err := newProvider(opts)
	if err != nil {
		return nil, err
	}
	if err := checkHostScheme(host.GetScheme(), p.opts.Topology); err != nil {
		return nil, err
	}
	p.host = host
	return p, nil
}

// newProvider applies and checks opts and returns a provider without a host cluster.
func newProvider(opts Options) (*Provider, error) {
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
	p.events.Action = eventAction
	p.problems = reconcileloop.Problems{Subject: "Cluster", Errors: Errors, Broken: BrokenClusters, Events: &p.events}
	p.Options = clusters.Options[cluster.Cluster]{
		CacheSyncTimeout: o.CacheSyncTimeout,
		Log:              p.log,
	}
	return p, nil
}

// checkHostScheme fails, naming the missing types and how to add them, when scheme lacks a type
// the topology reads or sends: otherwise Start, or the adminkubeconfig requests, would fail
// later with a less helpful message.
func checkHostScheme(scheme *runtime.Scheme, topology Topology) error {
	type need struct {
		obj runtime.Object
		add string
	}
	var needs []need
	switch topology {
	case TopologyGarden:
		needs = []need{
			{&gardencorev1beta1.Shoot{}, "gardencorev1beta1.AddToScheme"},
			{&authenticationv1alpha1.AdminKubeconfigRequest{}, "authenticationv1alpha1.AddToScheme"},
		}
	case TopologySeed:
		needs = []need{
			{&extensionsv1alpha1.Cluster{}, "extensionsv1alpha1.AddToScheme"},
			{&corev1.Secret{}, "clientgoscheme.AddToScheme"},
		}
	}
	var missing []string
	for _, n := range needs {
		if scheme == nil || !isRegistered(scheme, n.obj) {
			missing = append(missing, fmt.Sprintf("%T (%s)", n.obj, n.add))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("gardener provider: the host cluster's scheme lacks types of topology %q: %s", topology, strings.Join(missing, ", "))
	}
	return nil
}

func isRegistered(scheme *runtime.Scheme, obj runtime.Object) bool {
	_, _, err := scheme.ObjectKinds(obj)
	return err == nil
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
// seed Cluster object), until ctx ends; then it disengages every cluster and returns. It runs
// the host cluster New built; a host given to NewForHost keeps running when Start returns. It
// fails when the host's informers do not sync within Options.CacheSyncTimeout (for example
// because the Gardener API or the Cluster CRD is not there, or a shared host is not started),
// when the host cluster built by New stops, and when called twice. The manager calls Start;
// users do not.
func (p *Provider) Start(ctx context.Context, aware multicluster.Aware) error {
	p.mu.Lock()
	if p.started {
		p.mu.Unlock()
		return errors.New("gardener provider: Start called twice")
	}
	p.started = true
	p.mu.Unlock()

	// A host given to NewForHost is run by its owner; Start only uses it.
	var ownHost cluster.Cluster
	if p.ownHost {
		ownHost = p.host
	}
	host := reconcileloop.RunHost(ctx, "gardener provider", ownHost)
	defer host.Stop()
	ctx = host.Context()

	p.aware = aware
	p.events.Recorder = p.opts.EventRecorder
	if p.events.Recorder == nil {
		p.events.Recorder = p.host.GetEventRecorder(EventSource)
	}
	// Objects run in parallel without a bound, so that shoot clusters that take
	// CacheSyncTimeout to fail never hold up others.
	p.loop = reconcileloop.New(reconcileloop.Options[types.NamespacedName]{
		Name: "gardener-provider",
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
	p.states = map[types.NamespacedName]*memberState{}
	p.mu.Unlock()
	return host.Err()
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
	var watches []reconcileloop.Watch
	switch p.opts.Topology {
	case TopologyGarden:
		const hint = "is this a garden cluster, and may the provider list and watch shoots.core.gardener.cloud?"
		watches = []reconcileloop.Watch{{
			Object: &gardencorev1beta1.Shoot{},
			Enqueue: func(o client.Object) {
				if p.inNamespaces(o.GetNamespace()) {
					p.loop.Add(types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()})
				}
			},
			InformerHint: hint,
			SyncHint:     hint,
		}}
	case TopologySeed:
		const clusterHint = "is this a seed cluster with the clusters.extensions.gardener.cloud CRD, and may the provider list and watch them?"
		const secretHint = "may the provider list and watch Secrets?"
		watches = []reconcileloop.Watch{{
			Object:       &extensionsv1alpha1.Cluster{},
			Enqueue:      func(o client.Object) { p.loop.Add(types.NamespacedName{Name: o.GetName()}) },
			InformerHint: clusterHint,
			SyncHint:     clusterHint,
		}, {
			Object: &corev1.Secret{},
			Enqueue: func(o client.Object) {
				if o.GetName() == SeedSecretName {
					p.loop.Add(types.NamespacedName{Name: o.GetNamespace()})
				}
			},
			InformerHint: secretHint,
			SyncHint:     secretHint,
		}}
	}
	return reconcileloop.WatchHost(ctx, p.host.GetCache(), "gardener provider", p.opts.CacheSyncTimeout, watches...)
}

// inNamespaces reports whether Options.Namespaces selects the garden namespace ns.
func (p *Provider) inNamespaces(ns string) bool {
	return len(p.opts.Namespaces) == 0 || slices.Contains(p.opts.Namespaces, ns)
}

// knownKeys returns every object the provider knows, for the periodic resync.
func (p *Provider) knownKeys() []types.NamespacedName {
	p.mu.Lock()
	defer p.mu.Unlock()
	keys := make([]types.NamespacedName, 0, len(p.states))
	for key := range p.states {
		keys = append(keys, key)
	}
	return keys
}
