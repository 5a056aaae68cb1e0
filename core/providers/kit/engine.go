// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/clusters"
	"mcr.dev/core/internal/execplugin"
	"mcr.dev/core/internal/hostrun"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/redact"
)

// EngineOptions configures an Engine. newEngine applies the defaults.
type EngineOptions[K comparable] struct {
	// Name is the provider's name, e.g. "clusterapi-provider". It names the queue in the
	// workqueue metrics and the default logger; errors start with it, dash as space
	// ("clusterapi provider: ..."), and the default Event reporting controller is
	// "mcr.dev/<Name>".
	//
	// Required.
	Name string

	// Options are the provider's shared options. newEngine applies their defaults; read them
	// back with Engine.Options.
	Options Options

	// Clusters is the provider's set of engaged clusters (usually embedded in the provider,
	// where it supplies Get and IndexField).
	//
	// Required.
	Clusters *clusters.Clusters[cluster.Cluster]

	// Sync brings the members of one key in line with the source of truth: it reads the key's
	// state, and calls Engage, Disengage or Fail for each member the key stands for. The
	// Engine never runs two syncs of the same key at once; syncs of different keys run in
	// parallel without a bound, so that a member that takes long to fail (an unreachable one
	// waits a whole CacheSyncTimeout) never holds up others. ctx ends when Run's context ends.
	//
	// Required.
	Sync func(ctx context.Context, key K) Result

	// Sources queue the keys to sync; see Source.
	Sources []Source[K]

	// Keys returns the keys to sync again every Options.ResyncPeriod without any change, in
	// addition to the keys of every member the Engine knows (engaged or with a problem).
	//
	// Defaults to nil: only the keys of known members.
	Keys func() []K

	// Host is the cluster the provider's source of truth lives on, if any. Its recorder is the
	// default Options.EventRecorder.
	//
	// Defaults to nil: no host.
	Host cluster.Cluster

	// RunHost makes Start (Members.Start) start Host and end with an error when it stops first: for a host the
	// provider built itself. A host its owner runs (the manager's own cluster) is not started.
	//
	// Defaults to true for a host NewHost built, false for any other.
	RunHost bool

	// NotFoundMeansNotServed makes the access check take a 404 answer for a member that is not
	// there (not served rather than reachable): for members reached through a front door that
	// routes by path, where a path that is not routed answers 404.
	//
	// Defaults to false: a 404 means the API server does not serve SelfSubjectReviews, and the
	// member counts as reachable.
	NotFoundMeansNotServed bool

	// Stopped, when not nil, is called once Run has disengaged every member, before it returns,
	// for a provider to forget state of its own about members.
	Stopped func()

	// Subject names what a key or member is in log messages, e.g. "Kind cluster" in "Kind
	// cluster cannot be engaged".
	//
	// Defaults to "Cluster".
	Subject string

	// Errors, when not nil, counts every failed attempt by its metric reason (its one label).
	//
	// Errors and Broken, when both are nil, default to the metrics RegisterMetrics registered
	// under Name, if any.
	Errors *prometheus.CounterVec

	// Broken, when not nil, counts the members with an unresolved problem.
	Broken prometheus.Gauge
}

// Engine is the provider kit's engine: a keyed, rate-limited, parallel sync loop fed by
// Sources, and the engage step that turns a member's rest.Config into an engaged cluster. A
// provider says where members come from (its Sources and Sync) and how to get each member's
// rest.Config and name; the Engine does the rest the same way in every provider.
type Engine[K comparable] struct {
	opts      EngineOptions[K]
	log       logr.Logger
	errPrefix string
	loop      *loop[K]
	events    eventRecorder
	problems  Problems
	started   atomic.Bool
	inherited atomic.Pointer[clusters.Defaults] // the manager's cluster defaults, see SetClusterDefaults
	// inheritedUnused is set once the log says the defaults do not reach a member the provider
	// built itself.
	inheritedUnused atomic.Bool

	mu      sync.Mutex
	running bool // between the start of Run's loop and its end: lost members are queued
	aware   multicluster.Aware
	members map[multicluster.ClusterName]*memberState[K]
	// listing holds the keys the sources queued while starting (the first list of the source
	// of truth) that have not been synced yet; listed is set once the sources have started and
	// every one of them has been.
	listing        map[K]bool
	sourcesStarted bool
	listed         bool
	// runCtx is Run's context, which the exec plugin sources of members live in; sources
	// are those not closed yet.
	runCtx  context.Context
	sources map[*execplugin.Source]struct{}
}

var errNotInitialized = errors.New("provider kit: the provider was not created with its constructor (Members.Init was not called)")

// newEngine returns an Engine with an empty queue. Keys may be added from the moment it
// returns; Run processes them.
func newEngine[K comparable](opts EngineOptions[K]) (*Engine[K], error) {
	if opts.Name == "" || opts.Clusters == nil || opts.Sync == nil {
		return nil, errors.New("provider kit: EngineOptions needs Name, Clusters and Sync")
	}
	if opts.Host == nil {
		for _, src := range opts.Sources {
			// A NewForHost given no host: say so now rather than when Start fails.
			if h, ok := src.(HostObjects[K]); ok && h.Informers == nil {
				return nil, fmt.Errorf("%s: host cluster is nil", strings.ReplaceAll(opts.Name, "-", " "))
			}
		}
	}
	opts.Options.SetDefaults(opts.Name)
	if opts.Subject == "" {
		opts.Subject = "Cluster"
	}
	if _, built := opts.Host.(*builtHost); built {
		opts.RunHost = true
	}
	if opts.Errors == nil && opts.Broken == nil {
		opts.Errors, opts.Broken = registeredMetrics(opts.Name)
	}
	e := &Engine[K]{
		opts:      opts,
		log:       opts.Options.Logger,
		errPrefix: strings.ReplaceAll(opts.Name, "-", " "),
		members:   map[multicluster.ClusterName]*memberState[K]{},
	}
	e.events.Action = eventAction
	e.problems = Problems{Subject: opts.Subject, Errors: opts.Errors, Broken: opts.Broken, Record: e.events.record}
	e.loop = newLoop(loopOptions[K]{
		Name:          opts.Name,
		Sync:          e.sync,
		Keys:          e.resyncKeys,
		RetryMinDelay: opts.Options.RetryMinDelay,
		RetryMaxDelay: opts.Options.RetryMaxDelay,
		ResyncPeriod:  opts.Options.ResyncPeriod,
	})
	return e, nil
}

// options returns the shared options with their defaults applied.
func (e *Engine[K]) options() Options { return e.opts.Options }

// Logger returns Options.Logger.
func (e *Engine[K]) Logger() logr.Logger { return e.log }

// errorf returns an error that starts with the provider's name, as every error of Run does,
// passed through redact.Error.
func (e *Engine[K]) errorf(format string, args ...any) error {
	return redact.Error(fmt.Errorf(e.errPrefix+": "+format, args...))
}

// Add queues key for a sync. A key queued again while it waits is synced once; a key queued
// while it is being synced is synced again afterwards.
func (e *Engine[K]) Add(key K) {
	e.mu.Lock()
	if !e.sourcesStarted {
		if e.listing == nil {
			e.listing = map[K]bool{}
		}
		e.listing[key] = true
	}
	e.mu.Unlock()
	e.loop.Add(key)
}

// sync runs the provider's sync of key and notes when the first list has been synced.
func (e *Engine[K]) sync(ctx context.Context, key K) Result {
	res := e.opts.Sync(ctx, key)
	e.mu.Lock()
	delete(e.listing, key)
	e.checkListedLocked()
	e.mu.Unlock()
	return res
}

func (e *Engine[K]) checkListedLocked() {
	if e.sourcesStarted && len(e.listing) == 0 {
		e.listed = true
	}
}

// status returns what the provider knows of its fleet: whether its first list has been synced
// (every member it found engaged or failing), and the members that fail, with their problem.
// Members.FleetStatus returns it.
func (e *Engine[K]) status() multicluster.FleetStatus {
	e.mu.Lock()
	defer e.mu.Unlock()
	st := multicluster.FleetStatus{Listed: e.listed}
	for name, m := range e.members {
		if m.problem.broken {
			if st.Failing == nil {
				st.Failing = map[multicluster.ClusterName]string{}
			}
			st.Failing[name] = m.problem.message
		}
	}
	return st
}

// AddAfter queues key once d has passed, without touching its backoff: for a sync that must
// happen at a known time (credentials that expire) whatever the sync of now returns.
func (e *Engine[K]) AddAfter(key K, d time.Duration) { e.loop.AddAfter(key, d) }

// Record records an Event of the provider's own on regarding, with related (which may be nil)
// as the related object and the kit's action, "Engage": on the objects members come from, say a
// member's object that is not ready. The note is passed through redact.Text and cut to the
// 1024 bytes the API allows. A nil regarding, or a provider without an Event recorder (see
// Options.EventRecorder), records nothing.
func (e *Engine[K]) Record(regarding client.Object, related runtime.Object, eventType, reason, note string) {
	e.events.record(regarding, related, eventType, reason, note)
}

// GetHostObject reads the object of key into obj through r, the host's cache, as the first step
// of a Sync whose member comes from a host object (and to read one the member needs, such as
// its kubeconfig Secret). It returns true when obj was read. Otherwise the Sync ends with the
// Result it returns: notFound's when the object does not exist (disengage the member, or Fail
// it when the object is one it needs), or a retry when reading failed, which is logged with the
// member's cluster name unless the provider is stopping. An object being deleted is read like
// any other: whether that ends the member is the provider's call.
func (e *Engine[K]) GetHostObject(ctx context.Context, r client.Reader, key client.ObjectKey, obj client.Object, name multicluster.ClusterName, notFound func() Result) (Result, bool) {
	err := r.Get(ctx, key, obj)
	switch {
	case err == nil:
		return Result{}, true
	case apierrors.IsNotFound(err):
		return notFound(), false
	case ctx.Err() != nil:
		// The provider is stopping: the loop drops the key, and the error is no news.
		return Result{}, false
	}
	scheme, kind := clientgoscheme.Scheme, fmt.Sprintf("%T", obj)
	if e.opts.Host != nil {
		scheme = e.opts.Host.GetScheme()
	}
	if gvk, gvkErr := apiutil.GVKForObject(obj, scheme); gvkErr == nil {
		kind = gvk.Kind
	}
	e.log.Error(err, "Reading from the host cache", "cluster", name, "kind", kind, "object", key)
	return Result{Retry: true}, false
}

// run runs the provider until ctx ends: it starts the host (with EngineOptions.RunHost), the
// Sources, and the sync loop, engaging members with aware; then it disengages every member and
// returns. It fails when a Source cannot start, when the host built by the provider stops, and
// when called twice. Members.Start calls it.
func (e *Engine[K]) run(ctx context.Context, aware multicluster.Aware) error {
	if !e.started.CompareAndSwap(false, true) {
		return e.errorf("Start called twice")
	}
	var ownHost cluster.Cluster
	if e.opts.RunHost {
		ownHost = e.opts.Host
	}
	host := hostrun.Start(ctx, e.errPrefix, ownHost)
	defer host.Stop()
	ctx = host.Context()

	e.events.Recorder = e.opts.Options.EventRecorder
	if e.events.Recorder == nil && e.opts.Host != nil {
		e.events.Recorder = e.opts.Host.GetEventRecorder("mcr.dev/" + e.opts.Name)
	}
	e.mu.Lock()
	e.aware, e.running, e.runCtx = aware, true, ctx
	e.mu.Unlock()
	defer e.loop.ShutDown()

	var stops []func()
	defer func() {
		// Sources stop in reverse order, after the loop and before the host.
		for _, stop := range slices.Backward(stops) {
			stop()
		}
	}()
	for _, src := range e.opts.Sources {
		stop, err := src.Start(ctx, e)
		if err != nil {
			e.stopAll()
			if ctx.Err() != nil {
				return host.Err()
			}
			return err
		}
		stops = append(stops, stop)
	}

	e.mu.Lock()
	e.sourcesStarted = true
	e.checkListedLocked()
	e.mu.Unlock()
	e.loop.Run(ctx)
	e.stopAll()
	if e.opts.Stopped != nil {
		e.opts.Stopped()
	}
	return host.Err()
}

// stopAll disengages every member and forgets every problem, as the provider stops.
func (e *Engine[K]) stopAll() {
	e.mu.Lock()
	e.running = false
	for _, st := range e.members {
		st.engagedCtx = nil
		e.problems.Drop(&st.problem)
	}
	e.members = map[multicluster.ClusterName]*memberState[K]{}
	e.mu.Unlock()
	e.opts.Clusters.RemoveAll()
	e.closeSources()
}

// resyncKeys returns the keys of every known member and Options.Keys.
func (e *Engine[K]) resyncKeys() []K {
	var keys []K
	if e.opts.Keys != nil {
		keys = e.opts.Keys()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, st := range e.members {
		keys = append(keys, st.key)
	}
	return keys
}
