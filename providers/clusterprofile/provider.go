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
	"k8s.io/client-go/tools/events"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/cluster-inventory-api/pkg/access"

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
	DefaultUnreadyGracePeriod = time.Minute
	DefaultRetryMinDelay      = reconcileloop.DefaultRetryMinDelay
	DefaultRetryMaxDelay      = reconcileloop.DefaultRetryMaxDelay
	DefaultResyncPeriod       = reconcileloop.DefaultResyncPeriod
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
	// are used only as each provider's policies allow (default: ignored). New and NewForHost
	// validate it (ValidateProviderConfig) and keep a deep copy.
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
	// namespaces; the host cache New builds holds only these namespaces, so Roles in them are
	// enough RBAC. With NewForHost the host's owner configures its cache.
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
	// Namespaces and, with Secret, to the consumer's labeled Secrets). Not used with NewForHost,
	// whose host cluster its owner configures.
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
	reconcileloop.Durations{
		CacheSyncTimeout: &o.CacheSyncTimeout,
		RetryMinDelay:    &o.RetryMinDelay,
		RetryMaxDelay:    &o.RetryMaxDelay,
		ResyncPeriod:     &o.ResyncPeriod,
	}.SetDefaults()
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
// with New or NewForHost and hand it to the manager, which calls Start.
type Provider struct {
	// The embedded set supplies Get, IndexField and ClusterNames.
	clusters.Clusters[cluster.Cluster]

	opts    Options
	host    cluster.Cluster
	ownHost bool // New built host, so Start runs it
	log     logr.Logger

	mu         sync.Mutex
	started    bool
	states     map[types.NamespacedName]*profileState
	identities map[multicluster.ClusterName]Identity

	// Set by Start before any sync runs.
	aware    multicluster.Aware
	loop     *reconcileloop.Loop[types.NamespacedName]
	events   reconcileloop.Events
	problems reconcileloop.Problems
}

// profileState is what the provider remembers about one ClusterProfile. Only the sync of that
// profile touches it (the queue runs one sync per profile at a time); the map holding it is
// guarded by Provider.mu.
type profileState struct {
	// engaged is the instance engaged for the profile, hash the content hash of its
	// credentials.
	engaged cluster.Cluster
	hash    string
	// problem is the reported problem; while there is one, the profile counts in
	// BrokenClusters.
	problem reconcileloop.Problem
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
	p, err := newProvider(opts)
	if err != nil {
		return nil, err
	}
	o := p.opts

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
	p.host, p.ownHost = host, true
	return p, nil
}

// NewForHost returns a provider that reads ClusterProfiles (and, with the Secret strategy,
// kubeconfig Secrets) through host's cache, for example the manager's own cluster
// (mgr.GetLocalManager()), to share informers with other controllers. host must be started by
// its owner; Start waits for its cache, at most Options.CacheSyncTimeout, never starts or stops
// it, and only adds event handlers to its informers, which it removes when it returns.
// Options.HostClusterOptions are not used.
//
// host's scheme must hold the ClusterProfile type (v1alpha1.AddToScheme) and, with the Secret
// strategy, Secrets (clientgoscheme.AddToScheme); NewForHost fails otherwise. Options.Namespaces
// still selects the profiles the provider serves, but host's cache holds what its owner
// configured: a default cache holds every ClusterProfile and, with the Secret strategy, every
// Secret of the cluster with its data; restrict it with the owner's cache options
// (DefaultNamespaces, and ByObject for Secrets with the label
// x-k8s.io/cluster-inventory-consumer=<ConsumerName>) to what the provider needs.
func NewForHost(host cluster.Cluster, opts Options) (*Provider, error) {
	if host == nil {
		return nil, errors.New("clusterprofile provider: host cluster is nil")
	}
	p, err := newProvider(opts)
	if err != nil {
		return nil, err
	}
	if err := p.checkHostScheme(host.GetScheme()); err != nil {
		return nil, fmt.Errorf("clusterprofile provider: %w", err)
	}
	p.host = host
	return p, nil
}

// newProvider validates and defaults opts and returns a provider without a host, the part New
// and NewForHost share.
func newProvider(opts Options) (*Provider, error) {
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
	p.events.Action = eventAction
	p.problems = reconcileloop.Problems{Subject: "Cluster", Errors: Errors, Broken: BrokenClusters, Events: &p.events}
	p.Options = clusters.Options[cluster.Cluster]{
		CacheSyncTimeout: o.CacheSyncTimeout,
		Log:              o.Log,
		// The provider replaces an engaged cluster only when the content hash of its
		// credentials changed, so every replacement it asks for is a real one.
		EqualClusters: func(_, _ cluster.Cluster) bool { return false },
	}
	return p, nil
}

// checkHostScheme reports the types the provider reads that a caller's host scheme lacks, so
// that NewForHost fails at once instead of Start failing on an informer it cannot create.
func (p *Provider) checkHostScheme(s *runtime.Scheme) error {
	if s == nil {
		return errors.New("the host cluster has no scheme")
	}
	var errs []error
	if gvk := v1alpha1.SchemeGroupVersion.WithKind("ClusterProfile"); !s.Recognizes(gvk) {
		errs = append(errs, fmt.Errorf("the host cluster's scheme lacks %s; add it with v1alpha1.AddToScheme (sigs.k8s.io/cluster-inventory-api/apis/v1alpha1)", gvk))
	}
	if gvk := corev1.SchemeGroupVersion.WithKind("Secret"); p.opts.Secret != nil && !s.Recognizes(gvk) {
		errs = append(errs, fmt.Errorf("the host cluster's scheme lacks %s, which the Secret strategy reads; add it with clientgoscheme.AddToScheme (k8s.io/client-go/kubernetes/scheme)", gvk))
	}
	return errors.Join(errs...)
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
// the host cluster built by New stops, and when called twice. A host given to NewForHost is
// neither started nor stopped by Start. The manager calls Start; users do not.
func (p *Provider) Start(ctx context.Context, aware multicluster.Aware) error {
	p.mu.Lock()
	if p.started {
		p.mu.Unlock()
		return errors.New("clusterprofile provider: Start called twice")
	}
	p.started = true
	p.mu.Unlock()

	var ownHost cluster.Cluster
	if p.ownHost {
		ownHost = p.host
	}
	host := reconcileloop.RunHost(ctx, "clusterprofile provider", ownHost)
	defer host.Stop()
	ctx = host.Context()

	p.aware = aware
	p.events.Recorder = p.opts.EventRecorder
	if p.events.Recorder == nil {
		p.events.Recorder = p.host.GetEventRecorder(EventSource)
	}
	// Profiles run in parallel without a bound, so that members that take CacheSyncTimeout to
	// fail (or plugins that are slow) never hold up others.
	p.loop = reconcileloop.New(reconcileloop.Options[types.NamespacedName]{
		Name:          "clusterprofile-provider",
		Sync:          p.sync,
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
		if !st.unreadySince.IsZero() {
			UnreadyEngagedClusters.Dec()
		}
	}
	p.states = map[types.NamespacedName]*profileState{}
	p.identities = map[multicluster.ClusterName]Identity{}
	p.mu.Unlock()
	return host.Err()
}

// watch registers the provider's event handlers on the host's ClusterProfile (and Secret)
// informers and waits, at most Options.CacheSyncTimeout, until they have seen every existing
// object. The returned func removes the handlers.
func (p *Provider) watch(ctx context.Context) (stop func(), err error) {
	const informerHint = "is the ClusterProfile CRD installed?"
	const syncHint = "is the ClusterProfile CRD installed, and does the provider have list and watch permission?"
	watches := []reconcileloop.Watch{{
		Object: &v1alpha1.ClusterProfile{},
		Enqueue: func(o client.Object) {
			if p.inNamespaces(o.GetNamespace()) {
				p.loop.Add(types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()})
			}
		},
		EnqueueOld:   true,
		InformerHint: informerHint,
		SyncHint:     syncHint,
	}}
	if p.opts.Secret != nil {
		watches = append(watches, reconcileloop.Watch{
			Object: &corev1.Secret{},
			Enqueue: func(o client.Object) {
				if name := o.GetLabels()[SecretLabelProfile]; name != "" && p.inNamespaces(o.GetNamespace()) {
					p.loop.Add(types.NamespacedName{Namespace: o.GetNamespace(), Name: name})
				}
			},
			// A Secret whose profile label changed concerns both profiles.
			EnqueueOld:   true,
			InformerHint: informerHint,
			SyncHint:     syncHint,
		})
	}
	return reconcileloop.WatchHost(ctx, p.host.GetCache(), "clusterprofile provider", p.opts.CacheSyncTimeout, watches...)
}

// knownKeys returns every profile the provider knows, for the periodic resync.
func (p *Provider) knownKeys() []types.NamespacedName {
	p.mu.Lock()
	defer p.mu.Unlock()
	keys := make([]types.NamespacedName, 0, len(p.states))
	for key := range p.states {
		keys = append(keys, key)
	}
	return keys
}
