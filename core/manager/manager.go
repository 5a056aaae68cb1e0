// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package manager

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"mcr.dev/core/clusters"
	mccontext "mcr.dev/core/context"
	"mcr.dev/core/metrics"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/sharding"
)

// LocalCluster is the name of the cluster the local manager talks to.
const LocalCluster = multicluster.ClusterName("")

// Options are controller-runtime's manager options.
type Options = manager.Options

// Runnable is a manager runnable that is also engaged with every cluster.
type Runnable interface {
	manager.Runnable
	multicluster.Aware
}

// Manager runs controllers across a fleet of clusters.
type Manager interface {
	// Engage engages a cluster with every registered Aware. Providers call it.
	multicluster.Aware

	// Add adds a runnable to the local manager. Runnables that are also multicluster.Aware are
	// engaged with every cluster, including those engaged before they were added.
	Add(manager.Runnable) error
	// Elected is closed when this replica is elected leader, or at start without leader election.
	Elected() <-chan struct{}
	// AddMetricsServerExtraHandler adds a handler to the metrics server.
	AddMetricsServerExtraHandler(path string, handler http.Handler) error
	// AddHealthzCheck adds a health check.
	AddHealthzCheck(name string, check healthz.Checker) error
	// AddReadyzCheck adds a readiness check.
	AddReadyzCheck(name string, check healthz.Checker) error
	// Start starts the provider, the local manager and everything added to it; it blocks until
	// ctx is done.
	Start(ctx context.Context) error
	// GetWebhookServer returns the local manager's webhook server.
	GetWebhookServer() webhook.Server
	// GetLogger returns the manager's logger.
	GetLogger() logr.Logger
	// GetControllerOptions returns the controller defaults of the manager.
	GetControllerOptions() config.Controller

	// GetCluster returns the named cluster; LocalCluster is the local manager. Unknown names
	// give an error wrapping multicluster.ErrClusterNotFound.
	GetCluster(ctx context.Context, clusterName multicluster.ClusterName) (cluster.Cluster, error)
	// ClusterFromContext returns the cluster of the request being reconciled.
	ClusterFromContext(ctx context.Context) (cluster.Cluster, error)
	// GetManager returns a controller-runtime manager whose cluster methods (client, cache,
	// scheme, RESTMapper, field indexer, recorders) are the named cluster's, and whose Add and
	// Start are the local manager's: a way to reuse single-cluster code.
	GetManager(ctx context.Context, clusterName multicluster.ClusterName) (manager.Manager, error)
	// GetLocalManager returns the controller-runtime manager of the local cluster.
	GetLocalManager() manager.Manager
	// GetProvider returns the provider, or nil.
	GetProvider() multicluster.Provider
	// GetFieldIndexer returns an indexer that applies to every engaged cluster, present and
	// future, the local one included when it is engaged.
	GetFieldIndexer() client.FieldIndexer
	// EngagedClusters returns the names of the clusters currently engaged, sorted.
	EngagedClusters() []multicluster.ClusterName
}

// Option configures the multi-cluster side of a manager.
type Option func(*mcManager)

// WithLocalClusterEngaged engages the local cluster, under LocalCluster, with every Aware once the
// local cache has synced, as if a provider had engaged it. Without a provider this is the
// default.
func WithLocalClusterEngaged() Option {
	return func(m *mcManager) { m.engageLocal = true }
}

// WithProviderLeaderElection runs the provider only on the elected leader. By default it runs on
// every replica, like the caches of controller-runtime, so that a new leader finds its clusters
// engaged and synced.
func WithProviderLeaderElection(needed bool) Option {
	return func(m *mcManager) { m.providerNeedsLeader = needed }
}

// WithSharding shares the provider's clusters among the replicas of the binary: each cluster is
// engaged with the Awares (controllers) of exactly one live replica, chosen by rendezvous
// hashing over the replicas that hold a membership Lease, and fenced by a per-cluster Lease that
// replica must hold first. See package sharding for the design, the guarantees and the cost.
//
// The provider still runs on every replica and discovers every cluster; the manager only hands
// the clusters this replica owns to its Awares. Consequences for controllers:
//   - EngagedClusters lists the clusters this replica owns.
//   - GetCluster and ClusterFromContext answer only for owned clusters (and LocalCluster):
//     other names wrap multicluster.ErrClusterNotFound, so that requests still queued for a
//     cluster that moved to another replica end without touching it. Reach clusters owned
//     elsewhere through GetProvider().Get.
//   - The local cluster is not sharded: with WithLocalClusterEngaged it is engaged on every
//     replica.
//
// Every replica must run the controllers, so sharding excludes leader election: New fails when
// both are enabled. Unset fields of opts are defaulted by package sharding, except Config, which
// defaults to the manager's host config, and, with New, Group, which defaults to the
// LeaderElectionID of the manager's Options. A manager without a provider ignores sharding.
func WithSharding(opts sharding.Options) Option {
	return func(m *mcManager) { m.shardingOpts = &opts }
}

// New creates a controller-runtime manager for config and wraps it with the provider. The
// provider may be nil: the manager then runs controllers on the local cluster only.
func New(config *rest.Config, provider multicluster.Provider, opts Options, mcOpts ...Option) (Manager, error) {
	var probe mcManager
	for _, o := range mcOpts {
		o(&probe)
	}
	if probe.shardingOpts != nil && provider != nil {
		if opts.LeaderElection {
			return nil, errors.New("sharding and leader election exclude each other: with sharding, " +
				"every replica runs the controllers for the clusters it owns")
		}
		if probe.shardingOpts.Group == "" && opts.LeaderElectionID != "" {
			shardingOpts := *probe.shardingOpts
			shardingOpts.Group = opts.LeaderElectionID
			mcOpts = append(slices.Clone(mcOpts), WithSharding(shardingOpts))
		}
	}
	if probe.clusterDefaults != nil {
		config, opts = inheritLocal(*probe.clusterDefaults, config, opts)
	}
	local, err := manager.New(config, opts)
	if err != nil {
		return nil, err
	}
	return WithMultiCluster(local, provider, mcOpts...)
}

// WithMultiCluster wraps an existing controller-runtime manager.
func WithMultiCluster(local manager.Manager, provider multicluster.Provider, mcOpts ...Option) (Manager, error) {
	m := &mcManager{
		Manager:  local,
		provider: provider,
		log:      local.GetLogger().WithName("multicluster"),
		engaged:  map[multicluster.ClusterName]*engagedCluster{},
	}
	m.localIndexes.Options.Logger = m.log
	for _, o := range mcOpts {
		o(m)
	}
	if provider == nil {
		m.engageLocal = true
	}
	m.handClusterDefaults(provider)
	if m.shardingOpts != nil && provider != nil {
		opts := *m.shardingOpts
		if opts.Config == nil {
			opts.Config = local.GetConfig()
		}
		// A caller's deprecated Log still wins over the manager's default.
		if opts.Logger.GetSink() == nil && opts.Log.GetSink() == nil { //nolint:staticcheck // reads the deprecated field on purpose
			opts.Logger = m.log.WithName("sharding")
		}
		coordinator, err := sharding.New(awareFunc(m.engageAwares), opts)
		if err != nil {
			return nil, err
		}
		m.coordinator = coordinator
		if err := local.Add(coordinator); err != nil {
			return nil, err
		}
	}
	if err := local.Add(&localEngager{m: m}); err != nil {
		return nil, err
	}
	if runnable, ok := provider.(multicluster.ProviderRunnable); ok {
		if err := local.Add(&providerRunner{m: m, provider: runnable}); err != nil {
			return nil, err
		}
	}
	return m, nil
}

type engagedCluster struct {
	cluster cluster.Cluster
	ctx     context.Context
	cancel  context.CancelFunc
	since   time.Time // for the fleet debug endpoint
}

type mcManager struct {
	manager.Manager

	provider            multicluster.Provider
	log                 logr.Logger
	engageLocal         bool
	providerNeedsLeader bool
	shardingOpts        *sharding.Options
	coordinator         *sharding.Coordinator // nil unless sharding
	clusterDefaults     *clusters.Defaults    // nil unless WithClusterDefaults
	// localIndexes holds the field indexes the local cluster did not serve the kind of when
	// they were added; they are parked and applied as members' are (see fleetIndexer).
	localIndexes clusters.Clusters[cluster.Cluster]

	mu      sync.Mutex
	awares  []multicluster.Aware
	engaged map[multicluster.ClusterName]*engagedCluster
}

// awareFunc adapts a function to multicluster.Aware.
type awareFunc func(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster) error

func (f awareFunc) Engage(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster) error {
	return f(ctx, name, cl)
}

// Engage engages the cluster with every Aware. It returns once all have engaged it, or with the
// error of those that failed after disengaging the cluster from the others again.
//
// With sharding, the cluster goes to the sharding coordinator instead, which returns at once and
// engages the Awares with it, in the same way, if and when this replica owns it.
func (m *mcManager) Engage(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster) error {
	if m.coordinator != nil {
		return m.coordinator.Engage(ctx, name, cl)
	}
	return m.engageAwares(ctx, name, cl)
}

// engageAwares engages the cluster with every Aware, all or nothing.
func (m *mcManager) engageAwares(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster) error {
	if cl == nil {
		return fmt.Errorf("cannot engage cluster %q: cluster is nil", name)
	}
	start := time.Now()
	m.mu.Lock()
	if old, ok := m.engaged[name]; ok {
		if old.cluster == cl && old.ctx.Err() == nil {
			m.mu.Unlock()
			return nil
		}
		old.cancel()
	}
	engCtx, cancel := context.WithCancel(ctx)
	e := &engagedCluster{cluster: cl, ctx: engCtx, cancel: cancel, since: time.Now()}
	m.engaged[name] = e
	metrics.EngagedClusters.Inc()
	metrics.RememberCluster(name)
	awares := slices.Clone(m.awares)
	m.mu.Unlock()
	context.AfterFunc(engCtx, func() { m.disengaged(name, e) })

	var errs []error
	for _, a := range awares {
		if err := a.Engage(engCtx, name, cl); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		cancel()
		// Forget it now rather than when the AfterFunc runs: the caller is told it failed.
		m.mu.Lock()
		if m.engaged[name] == e {
			delete(m.engaged, name)
		}
		m.mu.Unlock()
		metrics.EngageAttempts.WithLabelValues(metrics.ResultError).Inc()
		return fmt.Errorf("engaging cluster %q: %w", name, errors.Join(errs...))
	}
	metrics.EngageAttempts.WithLabelValues(metrics.ResultSuccess).Inc()
	metrics.EngageDuration.Observe(time.Since(start).Seconds())
	m.log.V(1).Info("Engaged cluster", "cluster", string(name))
	return nil
}

func (m *mcManager) disengaged(name multicluster.ClusterName, e *engagedCluster) {
	m.mu.Lock()
	current := m.engaged[name] == e
	if current {
		delete(m.engaged, name)
	}
	m.mu.Unlock()
	metrics.EngagedClusters.Dec()
	if current {
		metrics.ForgetCluster(name)
	}
	m.log.V(1).Info("Disengaged cluster", "cluster", string(name))
}

// Add adds the runnable to the local manager and, when it is Aware, engages it with every
// cluster already engaged and every future one.
func (m *mcManager) Add(r manager.Runnable) error {
	aware, ok := r.(multicluster.Aware)
	if !ok {
		return m.Manager.Add(r)
	}
	m.mu.Lock()
	m.awares = append(m.awares, aware)
	engaged := make(map[multicluster.ClusterName]*engagedCluster, len(m.engaged))
	for name, e := range m.engaged {
		engaged[name] = e
	}
	m.mu.Unlock()
	for name, e := range engaged {
		if err := aware.Engage(e.ctx, name, e.cluster); err != nil {
			metrics.EngageAttempts.WithLabelValues(metrics.ResultError).Inc()
			m.log.Error(err, "Cannot engage a runnable added late with an engaged cluster", "cluster", string(name))
		}
	}
	return m.Manager.Add(r)
}

func (m *mcManager) EngagedClusters() []multicluster.ClusterName {
	m.mu.Lock()
	defer m.mu.Unlock()
	names := make([]multicluster.ClusterName, 0, len(m.engaged))
	for name, e := range m.engaged {
		if e.ctx.Err() == nil { // its removal may still be on its way
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

func (m *mcManager) GetCluster(ctx context.Context, name multicluster.ClusterName) (cluster.Cluster, error) {
	if name == LocalCluster {
		return m.Manager, nil
	}
	if m.provider == nil {
		return nil, fmt.Errorf("cluster %q: no provider is configured: %w", name, multicluster.ErrClusterNotFound)
	}
	if m.coordinator != nil {
		m.mu.Lock()
		e, ok := m.engaged[name]
		m.mu.Unlock()
		if !ok || e.ctx.Err() != nil {
			return nil, fmt.Errorf("cluster %q is not owned by this replica: %w", name, multicluster.ErrClusterNotFound)
		}
		return e.cluster, nil
	}
	return m.provider.Get(ctx, name)
}

func (m *mcManager) ClusterFromContext(ctx context.Context) (cluster.Cluster, error) {
	name, ok := mccontext.ClusterFrom(ctx)
	if !ok {
		return nil, errors.New("no cluster in context: reconcilers of mcr controllers have one; " +
			"wrap other reconcilers with context.ReconcilerWithClusterInContext")
	}
	return m.GetCluster(ctx, name)
}

func (m *mcManager) GetManager(ctx context.Context, name multicluster.ClusterName) (manager.Manager, error) {
	cl, err := m.GetCluster(ctx, name)
	if err != nil {
		return nil, err
	}
	return &scopedManager{Manager: m.Manager, cluster: cl}, nil
}

func (m *mcManager) GetLocalManager() manager.Manager { return m.Manager }

func (m *mcManager) GetProvider() multicluster.Provider { return m.provider }

func (m *mcManager) GetFieldIndexer() client.FieldIndexer { return &fleetIndexer{m: m} }

// fleetIndexer applies an index to the provider's clusters and, when it is engaged, the local one.
type fleetIndexer struct{ m *mcManager }

func (f *fleetIndexer) IndexField(ctx context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	var errs []error
	if f.m.provider != nil {
		if err := f.m.provider.IndexField(ctx, obj, field, extract); err != nil {
			errs = append(errs, err)
		}
	}
	if f.m.engageLocal {
		err := f.m.Manager.GetFieldIndexer().IndexField(ctx, obj, field, extract)
		if _, notServed := clusters.NotServed(err); notServed {
			// Parked as on members: applied at once if the local cluster is tracked already,
			// else when it is (localEngager).
			err = f.m.localIndexes.IndexField(ctx, obj, field, extract)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("local cluster: %w", err))
		}
	}
	return errors.Join(errs...)
}

// localEngager engages the local cluster once its cache has synced, when asked to.
type localEngager struct{ m *mcManager }

func (l *localEngager) Start(ctx context.Context) error {
	if !l.m.engageLocal {
		return nil
	}
	if !l.m.Manager.GetCache().WaitForCacheSync(ctx) {
		return nil // stopping
	}
	// The local cluster's indexes on kinds it did not serve are applied now, or parked.
	if err := l.m.localIndexes.Add(ctx, LocalCluster, l.m.Manager, nil, clusters.AlreadyRunning()); err != nil {
		return fmt.Errorf("applying the local cluster's parked indexes: %w", err)
	}
	// Not through Engage: the local cluster is never sharded.
	if err := l.m.engageAwares(ctx, LocalCluster, l.m.Manager); err != nil {
		return fmt.Errorf("engaging the local cluster: %w", err)
	}
	return nil
}

func (l *localEngager) NeedLeaderElection() bool { return false }

// providerRunner runs a ProviderRunnable with the manager as its Aware.
type providerRunner struct {
	m        *mcManager
	provider multicluster.ProviderRunnable
}

func (p *providerRunner) Start(ctx context.Context) error {
	if err := p.provider.Start(ctx, p.m); err != nil && ctx.Err() == nil {
		return fmt.Errorf("provider stopped: %w", err)
	}
	return nil
}

func (p *providerRunner) NeedLeaderElection() bool { return p.m.providerNeedsLeader }
