// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package workqueue

import (
	"container/heap"
	"time"

	"mcr.dev/core/metrics"
	"mcr.dev/core/multicluster"
)

// BreakerOptions configure the circuit breaker of a cluster-fair queue (Options.Breaker).
type BreakerOptions struct {
	// FailureThreshold is the number of failed reconciles of a cluster in a row (no success in
	// between) that opens its breaker.
	//
	// Defaults to 10.
	FailureThreshold int

	// InitialBackoff is how long an open breaker holds a cluster's requests back before it lets
	// one through as a probe. Each failed probe doubles it, up to MaxBackoff; a successful probe
	// closes the breaker and resets it.
	//
	// Defaults to 5 seconds.
	InitialBackoff time.Duration

	// MaxBackoff bounds the backoff.
	//
	// Defaults to 5 minutes.
	MaxBackoff time.Duration
}

func (o BreakerOptions) withDefaults() BreakerOptions {
	if o.FailureThreshold <= 0 {
		o.FailureThreshold = 10
	}
	if o.InitialBackoff <= 0 {
		o.InitialBackoff = 5 * time.Second
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 5 * time.Minute
	}
	o.MaxBackoff = max(o.MaxBackoff, o.InitialBackoff)
	return o
}

// breakerState is the state of a cluster's circuit breaker.
type breakerState int

const (
	breakerClosed breakerState = iota
	breakerOpen
	breakerHalfOpen
)

func (s breakerState) String() string {
	switch s {
	case breakerOpen:
		return metrics.BreakerOpen
	case breakerHalfOpen:
		return metrics.BreakerHalfOpen
	default:
		return metrics.BreakerClosed
	}
}

// clusterGate is the queue's account of one cluster when caps or the breaker are on: its
// requests in flight, its failures, its breaker. It exists while the cluster has requests queued
// or in flight, or a breaker that is not closed.
type clusterGate struct {
	name multicluster.ClusterName
	// queued counts the cluster's entries in the queue, in any state.
	queued   int
	inFlight int

	breaker breakerState
	// failures counts failed reconciles in a row while closed.
	failures int
	// opens counts the times the breaker opened since it last closed; the backoff doubles with
	// each.
	opens int
	// reopenAt is when an open breaker turns half open.
	reopenAt time.Time
	// probing: half open and the probe is being processed.
	probing bool
}

// blocked reports whether Get must pass the cluster over.
func (g *clusterGate) blocked(maxInFlight int) bool {
	return g.breakerBlocks() || (maxInFlight > 0 && g.inFlight >= maxInFlight)
}

func (g *clusterGate) breakerBlocks() bool {
	return g.breaker == breakerOpen || (g.breaker == breakerHalfOpen && g.probing)
}

// inFlight is what the queue remembers of a request being processed.
type inFlight struct {
	// failed: the request was added again with RateLimited while being processed, which is
	// what controller-runtime does when a reconcile returns an error (other than a terminal
	// one) or asks for a rate-limited requeue.
	failed bool
	// probe: the request is the half-open breaker's probe.
	probe bool
}

// breakerEvent is a transition to log once the lock is released.
type breakerEvent struct {
	cluster  multicluster.ClusterName
	state    breakerState
	failures int
	backoff  time.Duration
}

// lockedGate returns the cluster's gate, creating it.
func (q *clusterFair[request]) lockedGate(cluster multicluster.ClusterName) *clusterGate {
	g := q.gates[cluster]
	if g == nil {
		g = &clusterGate{name: cluster}
		q.gates[cluster] = g
	}
	return g
}

// lockedGated reports whether caps or the breaker are on, so that gates are kept.
func (q *clusterFair[request]) lockedGated() bool { return q.gates != nil }

// lockedHandedOut accounts for a request of the cluster handed out by Get and returns what to
// remember of it.
func (q *clusterFair[request]) lockedHandedOut(cluster multicluster.ClusterName) inFlight {
	if !q.lockedGated() {
		return inFlight{}
	}
	g := q.gates[cluster]
	g.queued--
	g.inFlight++
	var f inFlight
	if g.breaker == breakerHalfOpen && !g.probing {
		g.probing = true
		f.probe = true
	}
	q.lockedUpdateHold(g)
	return f
}

// lockedFinished accounts for the end of a request's processing: the cap frees a place and the
// breaker learns the outcome.
func (q *clusterFair[request]) lockedFinished(cluster multicluster.ClusterName, f inFlight) {
	if !q.lockedGated() {
		return
	}
	g := q.gates[cluster]
	g.inFlight--
	if q.breaker != nil && !q.shuttingDown {
		q.lockedRecordOutcome(g, f)
	}
	q.lockedUpdateHold(g)
	q.lockedDropGateIfIdle(g)
}

// lockedRecordOutcome moves the cluster's breaker on the outcome of one of its requests.
func (q *clusterFair[request]) lockedRecordOutcome(g *clusterGate, f inFlight) {
	switch g.breaker {
	case breakerClosed:
		if !f.failed {
			g.failures = 0
			return
		}
		g.failures++
		if g.failures >= q.breaker.FailureThreshold {
			q.lockedOpen(g)
		}
	case breakerHalfOpen:
		// Outcomes of requests handed out before the breaker opened say nothing about the
		// cluster now; only the probe's counts.
		if !f.probe {
			return
		}
		g.probing = false
		if f.failed {
			g.failures++
			q.lockedOpen(g)
			return
		}
		g.breaker, g.failures, g.opens = breakerClosed, 0, 0
		q.lockedTransition(g, 0)
	case breakerOpen:
		// A request handed out before the breaker opened; its outcome is not news.
	}
}

// lockedOpen opens the cluster's breaker: its requests are held back for the backoff.
func (q *clusterFair[request]) lockedOpen(g *clusterGate) {
	backoff := q.breaker.InitialBackoff
	for i := 0; i < g.opens && backoff < q.breaker.MaxBackoff; i++ {
		backoff *= 2
	}
	backoff = min(backoff, q.breaker.MaxBackoff)
	g.opens++
	g.breaker = breakerOpen
	g.reopenAt = q.clock.Now().Add(backoff)
	heap.Push(&q.reopening, g)
	q.lockedTransition(g, backoff)
	q.lockedUpdateHold(g)
	q.lockedArmIfEarlier(g.reopenAt)
}

// lockedPromoteReopening turns the open breakers whose backoff has passed half open.
func (q *clusterFair[request]) lockedPromoteReopening(now time.Time) {
	for len(q.reopening) > 0 && !q.reopening[0].reopenAt.After(now) {
		g := heap.Pop(&q.reopening).(*clusterGate)
		g.breaker, g.probing = breakerHalfOpen, false
		q.lockedTransition(g, 0)
		q.lockedUpdateHold(g)
	}
}

// lockedTransition records the gate's new breaker state in the metrics, and the log line to
// write once the lock is released.
func (q *clusterFair[request]) lockedTransition(g *clusterGate, backoff time.Duration) {
	if q.name != "" {
		metrics.BreakerTransition(q.name, g.name, g.breaker.String())
	}
	q.events = append(q.events, breakerEvent{cluster: g.name, state: g.breaker, failures: g.failures, backoff: backoff})
}

// lockedUpdateHold holds the cluster's ready requests back, or releases them, as its cap and
// breaker say.
func (q *clusterFair[request]) lockedUpdateHold(g *clusterGate) {
	if g.blocked(q.maxInFlight) {
		q.ready.hold(g.name)
		return
	}
	for range min(q.ready.release(g.name), q.blockedGets) {
		q.readyCond.Signal()
	}
}

// lockedDropGateIfIdle forgets a cluster with nothing queued or in flight and a closed breaker.
func (q *clusterFair[request]) lockedDropGateIfIdle(g *clusterGate) {
	if g.queued == 0 && g.inFlight == 0 && g.breaker == breakerClosed {
		delete(q.gates, g.name)
	}
}

// lockedTakeEvents returns the transitions to log and forgets them.
func (q *clusterFair[request]) lockedTakeEvents() []breakerEvent {
	events := q.events
	q.events = nil
	return events
}

// logEvents logs breaker transitions, outside the lock: a slow log sink must not stall workers.
func (q *clusterFair[request]) logEvents(events []breakerEvent) {
	for _, e := range events {
		log := q.log.WithValues("cluster", string(e.cluster))
		switch e.state {
		case breakerOpen:
			log.Info("Cluster's reconciles keep failing; circuit breaker opened, holding its requests back",
				"failures", e.failures, "backoff", e.backoff)
		case breakerHalfOpen:
			log.Info("Circuit breaker half open; letting one request of the cluster through as a probe")
		case breakerClosed:
			log.Info("Probe succeeded; circuit breaker closed, serving the cluster's requests again")
		}
	}
}

// reopeningHeap orders open breakers by the time they turn half open. It implements
// container/heap.Interface.
type reopeningHeap []*clusterGate

func (h reopeningHeap) Len() int           { return len(h) }
func (h reopeningHeap) Less(i, j int) bool { return h[i].reopenAt.Before(h[j].reopenAt) }
func (h reopeningHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *reopeningHeap) Push(x any)        { *h = append(*h, x.(*clusterGate)) }

func (h *reopeningHeap) Pop() any {
	old := *h
	n := len(old) - 1
	g := old[n]
	old[n] = nil
	*h = old[:n]
	return g
}

// ClusterLen returns the number of the cluster's requests that are due: ready to be handed out,
// or held back by the cluster's cap or breaker. As in Len, delayed requests and requests waiting
// for their own processing to end are not counted. It is meant for debug pages (see
// mcr.dev/core/controller.ClusterQueue).
func (q *clusterFair[request]) ClusterLen(cluster multicluster.ClusterName) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := 0
	for _, lvl := range q.ready.levels {
		if cq := lvl.clusters[cluster]; cq != nil {
			n += cq.len
		}
	}
	return n
}

// ClusterBreakerState returns the state of the cluster's circuit breaker, one of
// metrics.BreakerClosed, BreakerHalfOpen and BreakerOpen, or "" when the queue has no breaker.
// It is meant for debug pages.
func (q *clusterFair[request]) ClusterBreakerState(cluster multicluster.ClusterName) string {
	if q.breaker == nil {
		return ""
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if g := q.gates[cluster]; g != nil {
		return g.breaker.String()
	}
	return metrics.BreakerClosed
}
