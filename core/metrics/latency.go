package metrics

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"mcr.dev/core/multicluster"
)

// OtherClusters is the cluster label of the per-cluster latency series that aggregate the
// clusters beyond ClusterLatencyOptions.MaxClusters.
const OtherClusters = "_other"

// latencyBuckets span a fast cache-only reconcile (1ms) to a slow or timing-out member (60s).
// Twelve buckets: each (controller, cluster) pair costs 15 series per histogram.
var latencyBuckets = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 60}

var (
	// ReconcileDuration is the time reconciles took, per controller and cluster. Clusters
	// beyond ClusterLatencyOptions.MaxClusters share the cluster label OtherClusters.
	ReconcileDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "mcr_reconcile_duration_seconds",
		Help:    "Time taken by reconciles, per controller and cluster (clusters beyond the configured limit are labeled _other).",
		Buckets: latencyBuckets,
	}, []string{"controller", "cluster"})

	// QueueWait is the time requests of the cluster-fair queue waited between becoming due and
	// being handed to a worker, per controller and cluster, bounded like ReconcileDuration.
	QueueWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "mcr_queue_wait_seconds",
		Help:    "Time requests waited in the cluster-fair queue between becoming due and being handed to a worker, per controller and cluster (clusters beyond the configured limit are labeled _other).",
		Buckets: latencyBuckets,
	}, []string{"controller", "cluster"})
)

func init() {
	ctrlmetrics.Registry.MustRegister(ReconcileDuration, QueueWait)
}

// ClusterLatencyOptions bound the per-cluster latency histograms, mcr_reconcile_duration_seconds
// and mcr_queue_wait_seconds.
type ClusterLatencyOptions struct {
	// MaxClusters is how many clusters of each controller get series of their own. They are the
	// first clusters observed; observations of the others go to the series labeled
	// OtherClusters, and a cluster that is disengaged (ForgetCluster) frees its place for the
	// next one observed. Every (controller, cluster) pair costs 15 series per histogram, so a
	// controller has at most 30 × (MaxClusters+1) of them, whatever the size of the fleet.
	//
	// Defaults to 100. A negative value turns both histograms off: nothing is recorded.
	MaxClusters int
}

const defaultMaxLatencyClusters = 100

func (o ClusterLatencyOptions) withDefaults() ClusterLatencyOptions {
	if o.MaxClusters == 0 {
		o.MaxClusters = defaultMaxLatencyClusters
	}
	return o
}

// SetClusterLatencyOptions replaces the bounds of the per-cluster latency histograms. Call it
// before controllers start: clusters that already have series keep them until they are
// forgotten.
func SetClusterLatencyOptions(opts ClusterLatencyOptions) {
	clusterLatency.configure(opts.withDefaults())
}

// ObserveReconcileDuration records a reconcile of the controller for the cluster that took d.
func ObserveReconcileDuration(controller string, cluster multicluster.ClusterName, d time.Duration) {
	clusterLatency.observe(reconcileDuration, controller, cluster, d)
}

// ObserveQueueWait records a request of the controller for the cluster that waited d in the
// queue before a worker got it.
func ObserveQueueWait(controller string, cluster multicluster.ClusterName, d time.Duration) {
	clusterLatency.observe(queueWait, controller, cluster, d)
}

// histogram indexes the per-cluster latency histograms.
type histogram int

const (
	reconcileDuration histogram = iota
	queueWait
	histograms
)

var clusterLatency = newLatencyGuard(ClusterLatencyOptions{}.withDefaults(), [histograms]*prometheus.HistogramVec{ReconcileDuration, QueueWait})

// latencyGuard admits at most max clusters per controller into the histograms' label values.
// Observing a cluster whose label is decided is a lock-free map lookup and an Observe; the lock
// is taken only the first time a (controller, cluster) pair is seen and when series are created.
type latencyGuard struct {
	vecs    [histograms]*prometheus.HistogramVec
	enabled atomic.Bool

	// slots caches the slot of every (controller, cluster) pair seen: its own or the
	// controller's OtherClusters slot.
	slots sync.Map // latencyKey → *latencySlot

	mu          sync.Mutex
	max         int
	controllers map[string]*controllerLatency
}

type latencyKey struct {
	controller string
	cluster    multicluster.ClusterName
}

// controllerLatency is what the guard knows of one controller's clusters.
type controllerLatency struct {
	// own holds the clusters with series of their own; at most max of them.
	own map[multicluster.ClusterName]*latencySlot
	// others holds the clusters cached as OtherClusters, so that they can be decided again
	// when a place frees up.
	others map[multicluster.ClusterName]struct{}
	other  *latencySlot
}

// latencySlot is one label pair (controller, cluster or OtherClusters) and its series, created
// on first use so that a queue without reconciler, or the reverse, creates only its own.
type latencySlot struct {
	labels    [2]string
	observers [histograms]atomic.Pointer[prometheus.Observer]
	// forgotten (under latencyGuard.mu) stops a slot looked up before ForgetCluster from
	// creating its series again.
	forgotten bool
}

func newLatencyGuard(opts ClusterLatencyOptions, vecs [histograms]*prometheus.HistogramVec) *latencyGuard {
	g := &latencyGuard{vecs: vecs, controllers: map[string]*controllerLatency{}}
	g.configure(opts)
	return g
}

func (g *latencyGuard) configure(opts ClusterLatencyOptions) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.max = opts.MaxClusters
	g.enabled.Store(opts.MaxClusters >= 0)
	// Clusters counted among the others may have a place now.
	for controller, cl := range g.controllers {
		for cluster := range cl.others {
			g.slots.Delete(latencyKey{controller, cluster})
		}
		clear(cl.others)
	}
}

func (g *latencyGuard) observe(h histogram, controller string, cluster multicluster.ClusterName, d time.Duration) {
	if !g.enabled.Load() {
		return
	}
	s := g.slot(controller, cluster)
	o := s.observers[h].Load()
	if o == nil {
		if o = g.createObserver(s, h); o == nil {
			return
		}
	}
	(*o).Observe(d.Seconds())
}

// slot returns the pair's slot, deciding it the first time.
func (g *latencyGuard) slot(controller string, cluster multicluster.ClusterName) *latencySlot {
	key := latencyKey{controller, cluster}
	if s, ok := g.slots.Load(key); ok {
		return s.(*latencySlot)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if s, ok := g.slots.Load(key); ok {
		return s.(*latencySlot)
	}
	cl := g.controllers[controller]
	if cl == nil {
		cl = &controllerLatency{own: map[multicluster.ClusterName]*latencySlot{}, others: map[multicluster.ClusterName]struct{}{}}
		g.controllers[controller] = cl
	}
	var s *latencySlot
	if len(cl.own) < g.max {
		s = &latencySlot{labels: [2]string{controller, string(cluster)}}
		cl.own[cluster] = s
	} else {
		if cl.other == nil {
			cl.other = &latencySlot{labels: [2]string{controller, OtherClusters}}
		}
		s = cl.other
		cl.others[cluster] = struct{}{}
	}
	g.slots.Store(key, s)
	return s
}

// createObserver creates the slot's series of histogram h, unless the slot was forgotten
// meanwhile; then it returns nil and the observation is dropped.
func (g *latencyGuard) createObserver(s *latencySlot, h histogram) *prometheus.Observer {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s.forgotten {
		return nil
	}
	if o := s.observers[h].Load(); o != nil {
		return o
	}
	o := g.vecs[h].WithLabelValues(s.labels[:]...)
	s.observers[h].Store(&o)
	return &o
}

// forget deletes the cluster's series of every controller and frees its places.
func (g *latencyGuard) forget(cluster multicluster.ClusterName) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for controller, cl := range g.controllers {
		key := latencyKey{controller, cluster}
		if s, ok := cl.own[cluster]; ok {
			s.forgotten = true
			delete(cl.own, cluster)
			g.slots.Delete(key)
			// A place is free: the clusters counted among the others are decided again.
			for other := range cl.others {
				g.slots.Delete(latencyKey{controller, other})
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
	for _, vec := range g.vecs {
		vec.DeletePartialMatch(prometheus.Labels{"cluster": string(cluster)})
	}
}
