// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package metrics

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"mcr.dev/core/multicluster"
)

// OtherClusters is the cluster label of the per-cluster series that aggregate the clusters
// beyond ClusterSeriesOptions.MaxClusters.
const OtherClusters = "_other"

// ClusterSeriesOptions bound every series labeled with a cluster: mcr_reconcile_total,
// mcr_reconcile_duration_seconds, mcr_queue_wait_seconds, mcr_cluster_breaker_state and
// mcr_cluster_breaker_transitions_total.
type ClusterSeriesOptions struct {
	// MaxClusters is how many clusters of each controller get series of their own. They are the
	// first clusters recorded; the others are recorded under the cluster label OtherClusters,
	// the same way in every series: counters and histograms add them up, and the breaker state
	// counts them (mcr_cluster_breaker_state{cluster="_other",state="open"} is the number of
	// those clusters whose breaker is open). A cluster that is disengaged (ForgetCluster) frees
	// its place for the next one recorded. A controller thus has at most 40 × (MaxClusters+1)
	// per-cluster series (15 per histogram, 4 results, 3 breaker states, 3 transitions),
	// whatever the size of the fleet.
	//
	// Defaults to 100. A negative value turns every per-cluster series off: nothing is recorded.
	MaxClusters int
}

const defaultMaxClusters = 100

func (o ClusterSeriesOptions) withDefaults() ClusterSeriesOptions {
	if o.MaxClusters == 0 {
		o.MaxClusters = defaultMaxClusters
	}
	return o
}

// SetClusterSeriesOptions replaces the bounds of the per-cluster series. Call it before
// controllers start: clusters that already have series keep them until they are forgotten.
func SetClusterSeriesOptions(opts ClusterSeriesOptions) {
	guard.configure(opts.withDefaults())
}

// ObserveReconcile records a reconcile of the controller for the cluster that ended with result
// (ResultSuccess, ResultError, ResultRequeue or ResultRequeueAfter) after d.
func ObserveReconcile(controller string, cluster multicluster.ClusterName, result string, d time.Duration) {
	if !guard.enabled.Load() {
		return
	}
	s := guard.slot(controller, cluster)
	guard.observe(s, reconcileDuration, d)
	guard.inc(s, resultSeries(result))
}

// ObserveQueueWait records a request of the controller for the cluster that waited d in the
// queue before a worker got it.
func ObserveQueueWait(controller string, cluster multicluster.ClusterName, d time.Duration) {
	if !guard.enabled.Load() {
		return
	}
	guard.observe(guard.slot(controller, cluster), queueWait, d)
}

// BreakerTransition records that the circuit breaker of the controller's queue for the cluster
// entered state, one of BreakerClosed, BreakerHalfOpen and BreakerOpen.
func BreakerTransition(controller string, cluster multicluster.ClusterName, state string) {
	guard.breakerTransition(controller, cluster, state)
}

// ForgetCluster deletes every series labeled with the cluster and frees its places (see
// ClusterSeriesOptions). Until the cluster is engaged again (RememberCluster), or for ten
// minutes, nothing more is recorded for it: reconciles still running when it was disengaged
// would otherwise create its series again. The manager calls it when the cluster is disengaged.
func ForgetCluster(name multicluster.ClusterName) {
	guard.forget(name)
}

// RememberCluster records the cluster's series again after ForgetCluster. The manager calls it
// when the cluster is engaged.
func RememberCluster(name multicluster.ClusterName) {
	guard.remember(name)
}

// departedFor is how long a forgotten cluster stays unrecorded unless it is engaged again:
// long enough for the reconciles in flight when it was disengaged to end, short enough that
// a churning fleet does not keep many names.
const departedFor = 10 * time.Minute

// clusterSeries indexes the series of a (controller, cluster) label pair that are recorded on
// hot paths, and whose handles are therefore cached in the pair's slot.
type clusterSeries int

const (
	reconcileDuration clusterSeries = iota
	queueWait
	reconcileSuccess
	reconcileError
	reconcileRequeue
	reconcileRequeueAfter
	cachedSeries
)

var results = [...]string{
	reconcileSuccess:      ResultSuccess,
	reconcileError:        ResultError,
	reconcileRequeue:      ResultRequeue,
	reconcileRequeueAfter: ResultRequeueAfter,
}

func resultSeries(result string) clusterSeries {
	for s := reconcileSuccess; s < cachedSeries; s++ {
		if results[s] == result {
			return s
		}
	}
	return reconcileError
}

var breakerStates = [...]string{BreakerClosed, BreakerHalfOpen, BreakerOpen}

// clusterVecs are the vectors labeled with controller and cluster.
type clusterVecs struct {
	reconcileTotal     *prometheus.CounterVec
	reconcileDuration  *prometheus.HistogramVec
	queueWait          *prometheus.HistogramVec
	breakerState       *prometheus.GaugeVec
	breakerTransitions *prometheus.CounterVec
}

func (v clusterVecs) all() []interface {
	DeletePartialMatch(prometheus.Labels) int
} {
	return []interface {
		DeletePartialMatch(prometheus.Labels) int
	}{v.reconcileTotal, v.reconcileDuration, v.queueWait, v.breakerState, v.breakerTransitions}
}

var guard = newClusterGuard(ClusterSeriesOptions{}.withDefaults(), clusterVecs{
	reconcileTotal:     ReconcileTotal,
	reconcileDuration:  ReconcileDuration,
	queueWait:          QueueWait,
	breakerState:       ClusterBreakerState,
	breakerTransitions: ClusterBreakerTransitions,
})

// clusterGuard decides, once per (controller, cluster) pair, whether the cluster's series carry
// its name or OtherClusters, and is the only writer of the per-cluster vectors. Recording for a
// pair whose label is decided is a lock-free map lookup and an atomic load; the lock is taken
// only the first time a pair is seen, when a series is created, and for breaker transitions.
type clusterGuard struct {
	vecs    clusterVecs
	enabled atomic.Bool

	// slots caches the slot of every (controller, cluster) pair seen: its own or the
	// controller's OtherClusters slot.
	slots sync.Map // clusterKey → *clusterSlot

	mu          sync.Mutex
	max         int
	controllers map[string]*controllerClusters
	// breakers holds, per pair whose breaker has changed state, the slot its state is recorded
	// in and the state, so that a cluster counted under OtherClusters can be taken out again.
	breakers map[clusterKey]breakerRecord
	// departed holds the clusters forgotten and not remembered since, with the time they were
	// forgotten; they get the dropped slot.
	departed map[multicluster.ClusterName]time.Time
	dropped  *clusterSlot
	now      func() time.Time
}

type clusterKey struct {
	controller string
	cluster    multicluster.ClusterName
}

type breakerRecord struct {
	slot  *clusterSlot
	state string
}

// controllerClusters is what the guard knows of one controller's clusters.
type controllerClusters struct {
	// own holds the clusters with series of their own; at most max of them.
	own map[multicluster.ClusterName]*clusterSlot
	// others holds the clusters cached as OtherClusters, so that they can be decided again
	// when a place frees up.
	others map[multicluster.ClusterName]struct{}
	other  *clusterSlot
}

// clusterSlot is one label pair (controller, cluster or OtherClusters) and its series, created
// on first use so that a queue without reconciler, or the reverse, creates only its own.
type clusterSlot struct {
	labels  [2]string
	series  [cachedSeries]atomic.Pointer[seriesHandle]
	isOther bool
	// forgotten (under clusterGuard.mu) stops a slot looked up before ForgetCluster from
	// creating its series again.
	forgotten bool
}

type seriesHandle struct {
	observer prometheus.Observer
	counter  prometheus.Counter
}

func newClusterGuard(opts ClusterSeriesOptions, vecs clusterVecs) *clusterGuard {
	g := &clusterGuard{
		vecs:        vecs,
		controllers: map[string]*controllerClusters{},
		breakers:    map[clusterKey]breakerRecord{},
		departed:    map[multicluster.ClusterName]time.Time{},
		dropped:     &clusterSlot{forgotten: true},
		now:         time.Now,
	}
	g.configure(opts)
	return g
}

func (g *clusterGuard) configure(opts ClusterSeriesOptions) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.max = opts.MaxClusters
	g.enabled.Store(opts.MaxClusters >= 0)
	// Clusters counted among the others may have a place now.
	for controller, cl := range g.controllers {
		for cluster := range cl.others {
			g.slots.Delete(clusterKey{controller, cluster})
		}
		clear(cl.others)
	}
}

func (g *clusterGuard) observe(s *clusterSlot, id clusterSeries, d time.Duration) {
	if h := g.handle(s, id); h != nil {
		h.observer.Observe(d.Seconds())
	}
}

func (g *clusterGuard) inc(s *clusterSlot, id clusterSeries) {
	if h := g.handle(s, id); h != nil {
		h.counter.Inc()
	}
}

// handle returns the slot's series id, creating it the first time, or nil when the slot was
// forgotten meanwhile; then the observation is dropped.
func (g *clusterGuard) handle(s *clusterSlot, id clusterSeries) *seriesHandle {
	if h := s.series[id].Load(); h != nil {
		return h
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if s.forgotten {
		return nil
	}
	if h := s.series[id].Load(); h != nil {
		return h
	}
	var h seriesHandle
	switch id {
	case reconcileDuration:
		h.observer = g.vecs.reconcileDuration.WithLabelValues(s.labels[:]...)
	case queueWait:
		h.observer = g.vecs.queueWait.WithLabelValues(s.labels[:]...)
	default:
		h.counter = g.vecs.reconcileTotal.WithLabelValues(s.labels[0], s.labels[1], results[id])
	}
	s.series[id].Store(&h)
	return &h
}

// slot returns the pair's slot, deciding it the first time.
func (g *clusterGuard) slot(controller string, cluster multicluster.ClusterName) *clusterSlot {
	if s, ok := g.slots.Load(clusterKey{controller, cluster}); ok {
		return s.(*clusterSlot)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.slotLocked(controller, cluster)
}

func (g *clusterGuard) slotLocked(controller string, cluster multicluster.ClusterName) *clusterSlot {
	key := clusterKey{controller, cluster}
	if s, ok := g.slots.Load(key); ok {
		return s.(*clusterSlot)
	}
	if at, ok := g.departed[cluster]; ok {
		if g.now().Sub(at) < departedFor {
			return g.dropped
		}
		delete(g.departed, cluster)
	}
	cl := g.controllers[controller]
	if cl == nil {
		cl = &controllerClusters{own: map[multicluster.ClusterName]*clusterSlot{}, others: map[multicluster.ClusterName]struct{}{}}
		g.controllers[controller] = cl
	}
	var s *clusterSlot
	if len(cl.own) < g.max {
		s = &clusterSlot{labels: [2]string{controller, string(cluster)}}
		cl.own[cluster] = s
	} else {
		if cl.other == nil {
			cl.other = &clusterSlot{labels: [2]string{controller, OtherClusters}, isOther: true}
		}
		s = cl.other
		cl.others[cluster] = struct{}{}
	}
	g.slots.Store(key, s)
	return s
}

// breakerTransition records a state change of the pair's breaker. A cluster of its own has one
// series per state, 1 for the current state and 0 for the others; the OtherClusters series
// count the clusters in each state, so the cluster's previous state is taken out of them.
func (g *clusterGuard) breakerTransition(controller string, cluster multicluster.ClusterName, state string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.enabled.Load() {
		return
	}
	key := clusterKey{controller, cluster}
	if prev, ok := g.breakers[key]; ok && prev.slot.isOther {
		g.vecs.breakerState.WithLabelValues(controller, OtherClusters, prev.state).Dec()
	}
	s := g.slotLocked(controller, cluster)
	if s.forgotten {
		return
	}
	for _, st := range breakerStates {
		gauge := g.vecs.breakerState.WithLabelValues(s.labels[0], s.labels[1], st)
		switch {
		case s.isOther && st == state:
			gauge.Inc()
		case s.isOther:
			gauge.Add(0) // every state has a series from the first transition on
		case st == state:
			gauge.Set(1)
		default:
			gauge.Set(0)
		}
	}
	g.vecs.breakerTransitions.WithLabelValues(s.labels[0], s.labels[1], state).Inc()
	g.breakers[key] = breakerRecord{slot: s, state: state}
}

// forget deletes the cluster's series of every controller and frees its places.
func (g *clusterGuard) forget(cluster multicluster.ClusterName) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for controller, cl := range g.controllers {
		key := clusterKey{controller, cluster}
		if b, ok := g.breakers[key]; ok {
			if b.slot.isOther {
				g.vecs.breakerState.WithLabelValues(controller, OtherClusters, b.state).Dec()
			}
			delete(g.breakers, key)
		}
		if s, ok := cl.own[cluster]; ok {
			s.forgotten = true
			delete(cl.own, cluster)
			g.slots.Delete(key)
			// A place is free: the clusters counted among the others are decided again.
			for other := range cl.others {
				g.slots.Delete(clusterKey{controller, other})
			}
			clear(cl.others)
		}
		if _, ok := cl.others[cluster]; ok {
			delete(cl.others, cluster)
			g.slots.Delete(key)
		}
		if len(cl.own) == 0 && cl.other == nil {
			delete(g.controllers, controller)
		}
	}
	for _, vec := range g.vecs.all() {
		vec.DeletePartialMatch(prometheus.Labels{"cluster": string(cluster)})
	}
	now := g.now()
	for name, at := range g.departed {
		if now.Sub(at) >= departedFor {
			delete(g.departed, name)
		}
	}
	g.departed[cluster] = now
}

// remember lets the cluster's series be recorded again.
func (g *clusterGuard) remember(cluster multicluster.ClusterName) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.departed, cluster)
}
