package milo

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"mcr.dev/core/clusters"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/reconcileloop"
	infrastructurev1alpha1 "mcr.dev/providers/milo/api/infrastructure/v1alpha1"
	resourcemanagerv1alpha1 "mcr.dev/providers/milo/api/resourcemanager/v1alpha1"
)

var (
	_ multicluster.Provider         = &Provider{}
	_ multicluster.ProviderRunnable = &Provider{}
)

// Defaults of Options.
const (
	DefaultUnreadyGracePeriod = 30 * time.Second
	DefaultRetryMinDelay      = reconcileloop.DefaultRetryMinDelay
	DefaultRetryMaxDelay      = reconcileloop.DefaultRetryMaxDelay
	DefaultResyncPeriod       = reconcileloop.DefaultResyncPeriod
)

// Options configures a Provider. The zero value of every field selects its default; defaults are
// applied in one place, Options.withDefaults.
type Options struct {
	// Mode selects what the provider watches and how it reaches a project's control plane:
	// ModeProject (Projects on the Milo apiserver, control planes through the Milo apiserver's
	// project paths) or ModeProjectControlPlane (ProjectControlPlanes on the infrastructure
	// cluster, control planes at their in-cluster Services).
	//
	// Defaults to ModeProject.
	Mode Mode

	// Selector selects the watched objects by label. An object whose labels stop matching is
	// disengaged at once. It is applied by the provider, not by the cache, so that an object
	// that stops matching is seen and disengaged like any other change.
	//
	// Defaults to nil: every object.
	Selector labels.Selector

	// IsReady reports whether a selected object (a *resourcemanagerv1alpha1.Project or a
	// *infrastructurev1alpha1.ProjectControlPlane, after Mode) is ready to be engaged. It must
	// be quick and must not block.
	//
	// Defaults to ProjectReady in ModeProject (condition Ready is True) and ControlPlaneReady in
	// ModeProjectControlPlane (condition ControlPlaneReady is True).
	IsReady func(ctx context.Context, obj client.Object) bool

	// UnreadyGracePeriod is how long an engaged project may stay unready before it is
	// disengaged; if it is ready again within the period it stays engaged, untouched. A project
	// that is not engaged is engaged as soon as it is ready. A negative value disengages at
	// once.
	//
	// Defaults to DefaultUnreadyGracePeriod (30s).
	UnreadyGracePeriod time.Duration

	// BaseConfig is the config every project's config is derived from: its TLS settings and
	// credentials are the ones the provider presents to every project's control plane. In
	// ModeProject its Host is the Milo apiserver whose project paths serve the control planes.
	//
	// Defaults to the host config given to New (the host cluster's config with NewForHost).
	BaseConfig *rest.Config

	// ControlPlaneHost returns the Host of a project's control plane (a URL, possibly with a
	// path) for the project's config, a copy of BaseConfig with only Host replaced. Override
	// it for other layouts: a gateway, another Service naming, tests.
	//
	// Defaults, in ModeProject, to BaseConfig's URL with the path
	// /apis/resourcemanager.miloapis.com/v1alpha1/projects/<project>/control-plane (ControlPlanePath),
	// and in ModeProjectControlPlane to https://milo-apiserver.project-<project>.svc.cluster.local:6443
	// (ServiceHost).
	ControlPlaneHost func(project string) string

	// RESTOptions change each project's rest.Config before its cluster is built, in order; an
	// error is reported like an unusable config (InvalidConfig).
	//
	// Defaults to none. Configs that set neither QPS nor Burst get 20 and 30 first.
	RESTOptions []func(*rest.Config) error

	// ClusterOptions are passed to cluster.New for every project's cluster (scheme, cache
	// options, ...).
	//
	// Defaults to none: the client-go scheme and a cache of all namespaces.
	ClusterOptions []cluster.Option

	// HostClusterOptions are passed to cluster.New for the host cluster that New builds, after
	// the provider's own (a scheme with the Milo types). Not used with NewForHost.
	//
	// Defaults to none.
	HostClusterOptions []cluster.Option

	// CacheSyncTimeout bounds, for each project, the access check and the wait for its cache to
	// sync; a project that exceeds it gets a ClusterUnreachable Event and is retried with
	// backoff while the others carry on. It also bounds the wait for the host's informer in
	// Start.
	//
	// Defaults to clusters.DefaultCacheSyncTimeout (one minute).
	CacheSyncTimeout time.Duration

	// RetryMinDelay and RetryMaxDelay bound the exponential backoff with which a ready project
	// that could not be reached or engaged is retried.
	//
	// Default to DefaultRetryMinDelay (1s) and DefaultRetryMaxDelay (5m).
	RetryMinDelay time.Duration
	RetryMaxDelay time.Duration

	// ResyncPeriod is how often every object is checked again without any change: a safety net
	// that also engages again a project whose cache stopped on its own.
	//
	// Defaults to DefaultResyncPeriod (10m).
	ResyncPeriod time.Duration

	// EventRecorder records Events on the watched objects.
	//
	// Defaults to the host cluster's recorder (events.k8s.io/v1 Events, reporting controller
	// EventSource). Events of cluster-scoped objects go to the namespace "default".
	EventRecorder events.EventRecorder

	// Log receives the provider's messages, with the cluster under the key "cluster".
	// Credentials are never logged.
	//
	// Defaults to controller-runtime's logger named "milo-provider".
	Log logr.Logger
}

// withDefaults is the only place defaults are applied; host is the config the provider watches
// through, the default BaseConfig.
func (o Options) withDefaults(host *rest.Config) (Options, error) {
	if o.Mode == "" {
		o.Mode = ModeProject
	}
	if err := o.Mode.validate(); err != nil {
		return o, err
	}
	if o.IsReady == nil {
		o.IsReady = o.Mode.defaultIsReady()
	}
	if o.UnreadyGracePeriod == 0 {
		o.UnreadyGracePeriod = DefaultUnreadyGracePeriod
	}
	if o.BaseConfig == nil {
		o.BaseConfig = host
	}
	if o.BaseConfig == nil {
		return o, errors.New("no BaseConfig and no host config")
	}
	if o.ControlPlaneHost == nil {
		switch o.Mode {
		case ModeProject:
			base, _, err := rest.DefaultServerUrlFor(o.BaseConfig)
			if err != nil {
				return o, fmt.Errorf("the URL of BaseConfig: %w", err)
			}
			o.ControlPlaneHost = func(project string) string { return ControlPlaneURL(base, project) }
		case ModeProjectControlPlane:
			o.ControlPlaneHost = ServiceHost
		}
	}
	reconcileloop.Durations{
		CacheSyncTimeout: &o.CacheSyncTimeout,
		RetryMinDelay:    &o.RetryMinDelay,
		RetryMaxDelay:    &o.RetryMaxDelay,
		ResyncPeriod:     &o.ResyncPeriod,
	}.SetDefaults()
	if o.Log.GetSink() == nil {
		o.Log = ctrllog.Log.WithName("milo-provider")
	}
	return o, nil
}

// Provider engages one cluster, named after the project, for every ready Milo project. Create
// it with New or NewForHost and hand it to the manager, which calls Start.
type Provider struct {
	// The embedded set supplies Get, IndexField and ClusterNames.
	clusters.Clusters[cluster.Cluster]

	opts    Options
	host    cluster.Cluster
	ownHost bool // New built host, so Start runs it
	log     logr.Logger

	mu      sync.Mutex
	started bool
	states  map[string]*projectState

	// Set by Start before any sync runs.
	aware    multicluster.Aware
	loop     *reconcileloop.Loop[string]
	events   reconcileloop.Events
	problems reconcileloop.Problems
}

// projectState is what the provider remembers about one project. Only the sync of that project
// touches it (the queue runs one sync per project at a time).
type projectState struct {
	// engaged is the instance engaged for the project.
	engaged cluster.Cluster
	// unreadySince is when the engaged project was first seen unready; zero while it is ready.
	unreadySince time.Time
	// problem is the reported problem; while there is one, the project counts in
	// BrokenProjects.
	problem reconcileloop.Problem
}

// Scheme returns a new scheme with the client-go types and the Milo types the provider reads,
// the scheme of the host cluster New builds. A host cluster given to NewForHost needs the
// Milo type of its Mode in its scheme.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme,
		resourcemanagerv1alpha1.AddToScheme,
		infrastructurev1alpha1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// New returns a provider that watches the Milo apiserver (ModeProject) or the infrastructure
// cluster (ModeProjectControlPlane) hostConfig points at. It builds its own host cluster, which
// Start runs, with a cache that holds only the objects of its Mode, without managed fields. It
// needs the RBAC in README.md and nothing else on the host.
func New(hostConfig *rest.Config, opts Options) (*Provider, error) {
	if hostConfig == nil {
		return nil, errors.New("milo provider: host config is nil")
	}
	p, err := newProvider(hostConfig, opts)
	if err != nil {
		return nil, err
	}
	scheme, err := Scheme()
	if err != nil {
		return nil, fmt.Errorf("milo provider: %w", err)
	}
	hostOpts := append([]cluster.Option{func(co *cluster.Options) {
		co.Scheme = scheme
		co.Logger = p.log.WithName("host")
		co.Cache.DefaultTransform = cache.TransformStripManagedFields()
	}}, p.opts.HostClusterOptions...)
	host, err := cluster.New(hostConfig, hostOpts...)
	if err != nil {
		return nil, fmt.Errorf("milo provider: creating the host cluster: %w", err)
	}
	p.host, p.ownHost = host, true
	return p, nil
}

// NewForHost returns a provider that reads Projects or ProjectControlPlanes through host's cache,
// for example the manager's own cluster (mgr.GetLocalManager()), to share informers with other
// controllers. host must be started by its owner and have the Milo type of Options.Mode in its
// scheme (see Scheme). Start only adds an event handler to host's informer and removes it when
// it returns.
func NewForHost(host cluster.Cluster, opts Options) (*Provider, error) {
	if host == nil {
		return nil, errors.New("milo provider: host cluster is nil")
	}
	p, err := newProvider(host.GetConfig(), opts)
	if err != nil {
		return nil, err
	}
	p.host = host
	return p, nil
}

func newProvider(host *rest.Config, opts Options) (*Provider, error) {
	o, err := opts.withDefaults(host)
	if err != nil {
		return nil, fmt.Errorf("milo provider: %w", err)
	}
	p := &Provider{
		opts:   o,
		log:    o.Log.WithValues("mode", string(o.Mode)),
		states: map[string]*projectState{},
	}
	p.events.Action = eventAction
	p.problems = reconcileloop.Problems{Subject: "Project", Errors: Errors, Broken: BrokenProjects, Events: &p.events}
	p.Options = clusters.Options[cluster.Cluster]{
		CacheSyncTimeout: o.CacheSyncTimeout,
		Log:              o.Log,
	}
	return p, nil
}

// Mode returns the mode the provider runs in.
func (p *Provider) Mode() Mode { return p.opts.Mode }

// Start watches the host's Projects or ProjectControlPlanes and engages a cluster with aware for
// every ready one, until ctx ends; then it disengages every cluster and returns. It fails when
// the host's informer does not sync within Options.CacheSyncTimeout (for example because the
// Milo CRDs are not installed), when the host cluster built by New stops, and when called twice.
// The manager calls Start; users do not.
func (p *Provider) Start(ctx context.Context, aware multicluster.Aware) error {
	p.mu.Lock()
	if p.started {
		p.mu.Unlock()
		return errors.New("milo provider: Start called twice")
	}
	p.started = true
	p.mu.Unlock()

	var ownHost cluster.Cluster
	if p.ownHost {
		ownHost = p.host
	}
	host := reconcileloop.RunHost(ctx, "milo provider", ownHost)
	defer host.Stop()
	ctx = host.Context()

	p.aware = aware
	p.events.Recorder = p.opts.EventRecorder
	if p.events.Recorder == nil {
		p.events.Recorder = p.host.GetEventRecorder(EventSource)
	}
	// Projects run in parallel without a bound, so that control planes that take
	// CacheSyncTimeout to fail never hold up others.
	p.loop = reconcileloop.New(reconcileloop.Options[string]{
		Name:          "milo-provider",
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
	}
	p.states = map[string]*projectState{}
	p.mu.Unlock()
	return host.Err()
}

// watch registers the provider's event handler on the host's informer of the Mode's type and
// waits, at most Options.CacheSyncTimeout, until it has seen every existing object. The
// returned func removes the handler.
func (p *Provider) watch(ctx context.Context) (stop func(), err error) {
	return reconcileloop.WatchHost(ctx, p.host.GetCache(), "milo provider", p.opts.CacheSyncTimeout, reconcileloop.Watch{
		Object:       p.opts.Mode.newObject(),
		Kind:         p.opts.Mode.kind(),
		Enqueue:      func(o client.Object) { p.loop.Add(o.GetName()) },
		InformerHint: "is the CRD installed, and the type in the host's scheme?",
		SyncHint:     "is the CRD installed, and does the provider have list and watch permission?",
	})
}

// knownKeys returns every project the provider knows, for the periodic resync.
func (p *Provider) knownKeys() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	keys := make([]string, 0, len(p.states))
	for key := range p.states {
		keys = append(keys, key)
	}
	return keys
}
