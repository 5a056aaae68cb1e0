// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"mcr.dev/core/clusters"
	mccontext "mcr.dev/core/context"
	"mcr.dev/core/internal/served"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/metrics"
	"mcr.dev/core/multicluster"
	mcreconcile "mcr.dev/core/reconcile"
	"mcr.dev/core/redact"
	mcsource "mcr.dev/core/source"
)

// Options are controller-runtime's controller options for multi-cluster requests.
type Options = controller.TypedOptions[mcreconcile.Request]

// Controller is a multi-cluster controller of mcreconcile.Request.
type Controller = TypedController[mcreconcile.Request]

// TypedController is a controller-runtime controller that can be engaged with clusters.
type TypedController[request mcreconcile.ClusterAware[request]] interface {
	controller.TypedController[request]
	multicluster.Aware

	// MultiClusterWatch watches src in every cluster the controller is engaged with, now and in
	// the future.
	MultiClusterWatch(src mcsource.TypedSource[client.Object, request]) error
}

var _ mcmanager.SyncReporter = &mcController[mcreconcile.Request]{}

// Option configures the multi-cluster side of a controller.
type Option func(*settings)

type settings struct {
	engageLocal    bool
	parkedRetryMax time.Duration
	forKind        *schema.GroupKind
}

// WithForKind names the kind the controller reconciles, as the builder's For does. The default
// log constructor then adds controller-runtime's builder keys: "controllerGroup" and
// "controllerKind" on every line, and on a request's lines the object under the kind's name
// ("ConfigMap": {"name": ..., "namespace": ...}) instead of "object". Without it the keys are
// those of controller-runtime's controller.New. No effect when Options.LogConstructor is set.
func WithForKind(gk schema.GroupKind) Option {
	return func(s *settings) { s.forKind = &gk }
}

// WithParkedRetryMax bounds the backoff (from one second, doubling) of the retries of a source
// parked on a cluster that does not serve its kind (see "Kinds a cluster does not serve" in the
// package doc): a kind a cluster starts serving is watched there at most this late. Each retry
// asks the cluster's discovery for the kind's group. Defaults to clusters.DefaultParkedRetryMax
// (30 seconds).
func WithParkedRetryMax(d time.Duration) Option {
	return func(s *settings) { s.parkedRetryMax = d }
}

// WithLocalCluster makes the controller engage the manager's local cluster (named
// mcmanager.LocalCluster) when it starts, whether or not the manager engages it. Sources still
// decide through their cluster filters whether they watch it.
func WithLocalCluster() Option {
	return func(s *settings) { s.engageLocal = true }
}

// New returns a controller added to the manager.
func New(name string, mgr mcmanager.Manager, options Options, opts ...Option) (Controller, error) {
	return NewTyped(name, mgr, options, opts...)
}

// NewTyped returns a controller of a custom request type added to the manager.
func NewTyped[request mcreconcile.ClusterAware[request]](name string, mgr mcmanager.Manager, options controller.TypedOptions[request], opts ...Option) (TypedController[request], error) {
	c, err := NewTypedUnmanaged(name, mgr, options, opts...)
	if err != nil {
		return nil, err
	}
	return c, mgr.Add(c)
}

// NewUnmanaged returns a controller that is not added to the manager; the caller starts it and
// engages it.
func NewUnmanaged(name string, mgr mcmanager.Manager, options Options, opts ...Option) (Controller, error) {
	return NewTypedUnmanaged(name, mgr, options, opts...)
}

// NewTypedUnmanaged returns a controller of a custom request type that is not added to the
// manager. Unset options are defaulted from the manager's controller options, as in
// controller-runtime; the default logger adds the cluster, namespace and name of every request.
func NewTypedUnmanaged[request mcreconcile.ClusterAware[request]](name string, mgr mcmanager.Manager, options controller.TypedOptions[request], opts ...Option) (TypedController[request], error) {
	s := settings{parkedRetryMax: clusters.DefaultParkedRetryMax}
	for _, o := range opts {
		o(&s)
	}
	if s.parkedRetryMax <= 0 {
		s.parkedRetryMax = clusters.DefaultParkedRetryMax
	}
	options.DefaultFromConfig(mgr.GetControllerOptions())
	if options.Logger.GetSink() == nil {
		options.Logger = mgr.GetLogger()
	}
	if options.LogConstructor == nil {
		options.LogConstructor = requestLogger[request](options.Logger.WithValues("controller", name), s.forKind)
	}
	if options.CacheSyncTimeout == 0 {
		options.CacheSyncTimeout = 2 * time.Minute
	}
	if options.Reconciler == nil {
		return nil, errors.New("must specify Reconciler")
	}
	instrumented := &instrumentedReconciler[request]{controller: name, reconciler: options.Reconciler}
	options.Reconciler = instrumented

	inner, err := controller.NewTypedUnmanaged(name, options)
	if err != nil {
		return nil, err
	}
	c := &mcController[request]{
		TypedController: inner,
		name:            name,
		log:             options.LogConstructor(nil),
		syncTimeout:     options.CacheSyncTimeout,
		clusters:        map[multicluster.ClusterName]*engagement{},
		queueReady:      make(chan struct{}),
		parkedRetryMax:  s.parkedRetryMax,
	}
	instrumented.onError = c.recordError
	if s.engageLocal {
		c.local = mgr.GetLocalManager()
	}
	// The queue only exists once controller-runtime starts the controller; a source started with
	// it hands it over, and with it the controller's context.
	if err := inner.Watch(&queueHandover[request]{controller: c}); err != nil {
		return nil, err
	}
	return c, nil
}

// requestLogger returns a log constructor with controller-runtime's keys (those of its builder
// when forKind is set, of controller.New otherwise) plus the request's cluster, so that log
// queries written for controller-runtime keep working. controller-runtime's controller adds
// "reconcileID" itself.
func requestLogger[request mcreconcile.ClusterAware[request]](base logr.Logger, forKind *schema.GroupKind) func(*request) logr.Logger {
	objectKey := "object"
	if forKind != nil {
		base = base.WithValues("controllerGroup", forKind.Group, "controllerKind", forKind.Kind)
		objectKey = forKind.Kind
	}
	return func(req *request) logr.Logger {
		if req == nil {
			return base
		}
		if r, ok := any(*req).(mcreconcile.Request); ok {
			return base.WithValues(
				"cluster", string(r.ClusterName),
				objectKey, klog.KRef(r.Namespace, r.Name),
				"namespace", r.Namespace, "name", r.Name,
			)
		}
		return base.WithValues("cluster", string((*req).Cluster()), "request", (*req).String())
	}
}

// engagement is one cluster engaged with the controller.
type engagement struct {
	name    multicluster.ClusterName
	cluster cluster.Cluster
	ctx     context.Context
	cancel  context.CancelFunc
	// synced holds the indexes (in mcController.sources) of the sources that have synced for
	// the cluster, do not watch it, or are parked; guarded by the controller's mu.
	synced map[int]bool
	// parked holds, by source index, why a source is parked: the cluster does not serve its
	// kind (see runSource); guarded by the controller's mu.
	parked map[int]string
	// lastError and lastErrorAt are the last error a reconcile of the cluster returned, redacted;
	// guarded by the controller's mu.
	lastError   string
	lastErrorAt time.Time
}

type mcController[request mcreconcile.ClusterAware[request]] struct {
	controller.TypedController[request]

	name        string
	log         logr.Logger
	syncTimeout time.Duration
	local       cluster.Cluster // engaged at start when set
	// parkedRetryMax bounds the retries of parked sources (WithParkedRetryMax).
	parkedRetryMax time.Duration

	mu       sync.Mutex
	sources  []mcsource.TypedSource[client.Object, request]
	clusters map[multicluster.ClusterName]*engagement
	stopped  bool

	queueReady chan struct{} // closed once queue is set
	queue      workqueue.TypedRateLimitingInterface[request]
}

// Engage starts the controller's sources for the cluster and returns without waiting for them.
// Engaging the same cluster instance again is a no-op; a different instance under the same name
// replaces the old one.
func (c *mcController[request]) Engage(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster) error {
	if cl == nil {
		return fmt.Errorf("controller %q: cannot engage cluster %q: cluster is nil", c.name, name)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return fmt.Errorf("controller %q: cannot engage cluster %q: controller has stopped", c.name, name)
	}
	if old, ok := c.clusters[name]; ok {
		if old.cluster == cl && old.ctx.Err() == nil {
			return nil
		}
		old.cancel()
	}
	engCtx, cancel := context.WithCancel(ctx)
	e := &engagement{name: name, cluster: cl, ctx: engCtx, cancel: cancel, synced: map[int]bool{}, parked: map[int]string{}}
	c.clusters[name] = e
	context.AfterFunc(engCtx, func() { c.forget(e) })
	for i, src := range c.sources {
		go c.runSource(e, i, src, nil)
	}
	return nil
}

func (c *mcController[request]) forget(e *engagement) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.clusters[e.name] == e {
		delete(c.clusters, e.name)
	}
	metrics.ParkedSources.WithLabelValues(c.name).Sub(float64(len(e.parked)))
	clear(e.parked)
	served.Forget(e.cluster)
}

// NeedLeaderElection reports whether the controller runs only on the leader: the controller's
// NeedLeaderElection option, true by default, as in controller-runtime. Without this method
// the manager would put every multi-cluster controller in the leader-election group, whatever
// the option says, because the embedded interface does not carry it.
func (c *mcController[request]) NeedLeaderElection() bool {
	if le, ok := c.TypedController.(interface{ NeedLeaderElection() bool }); ok {
		return le.NeedLeaderElection()
	}
	return true
}

// Warmup starts the controller's queue and sources before the manager wins the leader election
// when the controller's EnableWarmup option is set, as in controller-runtime: every cluster
// engaged meanwhile gets its sources started and synced, so that a replica taking over only has
// to acquire the Lease. Without the option it does nothing.
func (c *mcController[request]) Warmup(ctx context.Context) error {
	if w, ok := c.TypedController.(interface{ Warmup(context.Context) error }); ok {
		return w.Warmup(ctx)
	}
	return nil
}

// MultiClusterWatch watches src in every engaged cluster, present and future.
func (c *mcController[request]) MultiClusterWatch(src mcsource.TypedSource[client.Object, request]) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return fmt.Errorf("controller %q has stopped", c.name)
	}
	c.sources = append(c.sources, src)
	i := len(c.sources) - 1
	for _, e := range c.clusters {
		go c.runSource(e, i, src, nil)
	}
	return nil
}

// runSource starts src for one engaged cluster, retrying with backoff until it starts or the
// cluster is disengaged, then waits (bounded) for it to sync so that a cluster that never syncs
// is reported.
//
// A source that cannot start because the cluster does not serve its kind (a CRD installed in
// some members only, or not yet) is not an error there: it is parked. That is reported once (a
// log line, mcr_parked_sources, the fleet debug endpoint), counts as synced for readiness, and
// the source is tried again with a slow backoff (WithParkedRetryMax) until the cluster serves the
// kind, when it starts like any other. A source whose kind the cluster stops serving while it
// runs (its CRD deleted) stops and runs this again with gone set: it is parked in the same way.
func (c *mcController[request]) runSource(e *engagement, i int, src mcsource.TypedSource[client.Object, request], gone error) {
	select {
	case <-c.queueReady:
	case <-e.ctx.Done():
		return
	}
	log := c.log.WithValues("cluster", string(e.name), "source", fmt.Sprint(src))
	backoff, parkedBackoff := time.Second, time.Second
	var wait time.Duration
	if reason, notServed := clusters.NotServed(gone); notServed {
		c.park(e, i, reason, log)
		wait, parkedBackoff = parkedBackoff, min(2*parkedBackoff, c.parkedRetryMax)
	}
	for {
		if wait > 0 {
			select {
			case <-time.After(wait):
			case <-e.ctx.Done():
				return
			}
		}
		s, engage, err := src.ForCluster(e.name, e.cluster)
		if err == nil && !engage {
			c.markSynced(e, i)
			return
		}
		if err == nil {
			if n, ok := s.(interface{ OnNotServed(func(error)) }); ok {
				n.OnNotServed(func(err error) { go c.runSource(e, i, src, err) })
			}
			// Sources log through the context, with the cluster (see mcsource.Kind), and check
			// that their kind is still served as often as parked ones are retried.
			ctx := served.WithInterval(logr.NewContext(e.ctx, c.log.WithValues("cluster", string(e.name))), c.parkedRetryMax)
			err = c.startAndSync(ctx, e.name, s, func() { c.markSynced(e, i) }, func() { c.unpark(e, i, log) })
			if err == nil {
				return
			}
		}
		if e.ctx.Err() != nil {
			return
		}
		if reason, notServed := clusters.NotServed(err); notServed {
			c.park(e, i, reason, log)
			wait, parkedBackoff = parkedBackoff, min(2*parkedBackoff, c.parkedRetryMax)
		} else {
			metrics.ClusterSourceErrors.WithLabelValues(c.name).Inc()
			log.Error(err, "Cannot watch cluster, will retry", "retryIn", backoff)
			wait, backoff = backoff, min(2*backoff, time.Minute)
		}
	}
}

// park notes that source i cannot run in the engaged cluster e because e does not serve its
// kind, reporting it the first time.
func (c *mcController[request]) park(e *engagement, i int, reason string, log logr.Logger) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.ctx.Err() != nil {
		return
	}
	if _, parked := e.parked[i]; parked {
		return
	}
	e.parked[i] = reason
	metrics.ParkedSources.WithLabelValues(c.name).Inc()
	log.Info("Cluster does not serve the kind of this source; watch parked until it does", "reason", reason)
}

// unpark notes that source i started in e, after having been parked: it now counts as unsynced
// until it syncs.
func (c *mcController[request]) unpark(e *engagement, i int, log logr.Logger) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, parked := e.parked[i]; !parked {
		return
	}
	delete(e.parked, i)
	e.synced[i] = false
	metrics.ParkedSources.WithLabelValues(c.name).Dec()
	log.Info("Cluster now serves the kind of this source; watch started")
}

// startAndSync starts s and waits for it to sync, each bounded by the controller's
// CacheSyncTimeout. A source that is slow to start or to sync is reported once and waited for
// rather than replaced: a second source started next to a slow one would register its handler
// twice. A source that started but did not sync in time is left running (its informer keeps
// trying and its events flow once it syncs). onSynced is called once s has synced, also when
// that happens after the timeout.
//
// onStarted is called once s has started, before waiting for it to sync.
func (c *mcController[request]) startAndSync(ctx context.Context, name multicluster.ClusterName, s source.TypedSource[request], onSynced, onStarted func()) error {
	log := c.log.WithValues("cluster", string(name), "source", fmt.Sprint(s))
	started := make(chan error, 1)
	go func() { started <- s.Start(ctx, c.queue) }()
	timer := time.NewTimer(c.syncTimeout)
	defer timer.Stop()
	select {
	case err := <-started:
		if err != nil {
			return err
		}
	case <-timer.C:
		metrics.ClusterSourceErrors.WithLabelValues(c.name).Inc()
		log.Error(errors.New("source did not start in time"), "Cluster is slow to answer; still waiting for it", "timeout", c.syncTimeout)
		select {
		case err := <-started:
			if err != nil {
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	case <-ctx.Done():
		return ctx.Err()
	}
	onStarted()
	syncing, ok := s.(source.TypedSyncingSource[request])
	if !ok {
		onSynced()
		return nil
	}
	syncCtx, cancel := context.WithTimeout(ctx, c.syncTimeout)
	defer cancel()
	if err := syncing.WaitForSync(syncCtx); err != nil {
		if ctx.Err() == nil {
			metrics.ClusterSourceErrors.WithLabelValues(c.name).Inc()
			log.Error(err, "Cluster did not sync in time; its events will flow once it does", "timeout", c.syncTimeout)
			// Readiness learns of the sync when it happens.
			go func() {
				if syncing.WaitForSync(ctx) == nil {
					onSynced()
				}
			}()
		}
		return nil
	}
	onSynced()
	return nil
}

// markSynced notes that source i has synced for the engaged cluster e.
func (c *mcController[request]) markSynced(e *engagement, i int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e.synced[i] = true
}

// recordError keeps err as the last reconcile error of the cluster, for the fleet debug
// endpoint. Redacted: reconcilers' errors quote what client-go quotes, request URLs included.
func (c *mcController[request]) recordError(name multicluster.ClusterName, err error) {
	msg := redact.Text(err.Error())
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.clusters[name]; e != nil {
		e.lastError, e.lastErrorAt = msg, now
	}
}

// SyncedFor reports whether every source of the controller has synced for the engaged cluster
// name (or does not watch it); applies is false while the controller does not run (it has not
// started, e.g. on a replica that is not the leader, or it has stopped), when its sources do not
// run for any cluster. manager.FleetReadyCheck uses it.
func (c *mcController[request]) SyncedFor(name multicluster.ClusterName) (synced, applies bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.queue == nil || c.stopped {
		return false, false
	}
	e := c.clusters[name]
	if e == nil {
		return false, true
	}
	for i := range c.sources {
		if _, parked := e.parked[i]; !e.synced[i] && !parked {
			return false, true
		}
	}
	return true, true
}

// handOver receives the queue and the controller's context from controller-runtime.
func (c *mcController[request]) handOver(ctx context.Context, q workqueue.TypedRateLimitingInterface[request]) {
	c.mu.Lock()
	if c.queue != nil {
		c.mu.Unlock()
		return
	}
	c.queue = q
	close(c.queueReady)
	c.mu.Unlock()

	// When the controller stops, nothing it started for any cluster may keep running.
	context.AfterFunc(ctx, c.stop)
	if c.local != nil {
		if err := c.Engage(ctx, mcmanager.LocalCluster, c.local); err != nil {
			c.log.Error(err, "Cannot engage the local cluster")
		}
	}
}

func (c *mcController[request]) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = true
	for _, e := range c.clusters {
		e.cancel()
	}
}

// queueHandover is a source that only hands the controller's queue over to the multi-cluster
// controller; it watches nothing itself.
type queueHandover[request mcreconcile.ClusterAware[request]] struct {
	controller *mcController[request]
}

func (h *queueHandover[request]) Start(ctx context.Context, q workqueue.TypedRateLimitingInterface[request]) error {
	h.controller.handOver(ctx, q)
	return nil
}

func (h *queueHandover[request]) String() string { return "multi-cluster sources" }

// instrumentedReconciler counts and times reconciles per cluster and puts the cluster into the
// context.
type instrumentedReconciler[request mcreconcile.ClusterAware[request]] struct {
	controller string
	reconciler reconcile.TypedReconciler[request]
	onError    func(multicluster.ClusterName, error)
}

func (r *instrumentedReconciler[request]) Reconcile(ctx context.Context, req request) (reconcile.Result, error) {
	start := time.Now()
	res, err := r.reconciler.Reconcile(mccontext.WithCluster(ctx, req.Cluster()), req)
	d := time.Since(start)
	result := metrics.ResultSuccess
	switch {
	case err != nil:
		result = metrics.ResultError
		if r.onError != nil {
			r.onError(req.Cluster(), err)
		}
	case res.RequeueAfter > 0:
		result = metrics.ResultRequeueAfter
	case res.Requeue: //nolint:staticcheck // still honored by controller-runtime
		result = metrics.ResultRequeue
	}
	// Bounded per controller: see metrics.ClusterSeriesOptions.
	metrics.ObserveReconcile(r.controller, req.Cluster(), result, d)
	return res, err
}
