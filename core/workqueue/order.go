// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package workqueue

import (
	"cmp"
	"slices"
	"time"

	"mcr.dev/core/multicluster"
	"mcr.dev/core/reconcile"
)

// entryState says where a queued request is.
type entryState int

const (
	// stateWaiting: delayed, in the waiting heap.
	stateWaiting entryState = iota
	// stateReady: in its cluster's sub-queue, can be handed out.
	stateReady
	// stateParked: added while being processed; becomes ready at Done.
	stateParked
)

// entry is a queued request. A request has at most one entry; it is dropped when the request is
// handed out.
type entry[request reconcile.ClusterAware[request]] struct {
	key      request
	cluster  multicluster.ClusterName
	priority int
	state    entryState

	// Waiting only: when the request becomes ready, its place in the heap, and an insertion
	// counter that keeps requests with equal ready times in order.
	readyAt   time.Time
	heapIndex int
	seq       uint64

	// dueAt is when the request became due (ready or parked), for mcr_queue_wait_seconds; set
	// only when the queue has a name.
	dueAt time.Time

	// Ready only: the sub-queue holding the entry and its neighbors there.
	queue      *clusterQueue[request]
	prev, next *entry[request]
}

// clusterQueue is the FIFO of one cluster's ready requests at one priority. It exists only while
// it holds a request, so clusters that left the fleet leave nothing behind.
type clusterQueue[request reconcile.ClusterAware[request]] struct {
	cluster    multicluster.ClusterName
	level      *priorityLevel[request]
	head, tail *entry[request]
	len        int
	// held: the cluster's requests are held back (see readyOrder.hold), and the sub-queue is out
	// of its level's round.
	held bool

	// Neighbors in the level's round of clusters.
	prev, next *clusterQueue[request]
}

// priorityLevel holds the ready requests of one priority: a round of cluster sub-queues served in
// turn. It exists only while it holds a request.
type priorityLevel[request reconcile.ClusterAware[request]] struct {
	priority int
	// clusters holds every sub-queue of the level, held back or not.
	clusters map[multicluster.ClusterName]*clusterQueue[request]
	// turn is the sub-queue served next; the round is a ring through clusterQueue.prev/next of
	// the sub-queues not held back. It is nil when every sub-queue is held back.
	turn *clusterQueue[request]
}

// readyOrder decides which ready request is handed out next: the highest priority first, within
// a priority one request per cluster per turn, within a cluster first in, first out. Requests of
// clusters that are held back stay in their sub-queues, in order, but are not handed out.
type readyOrder[request reconcile.ClusterAware[request]] struct {
	levels map[int]*priorityLevel[request]
	// priorities lists the keys of the levels with a sub-queue in the round (not held back),
	// highest first. There are few distinct priorities, so a sorted slice beats a heap.
	priorities []int
	// count is the number of requests that can be handed out; heldCount of those held back.
	count, heldCount int
	// held lists the clusters held back, also while they have no ready request.
	held map[multicluster.ClusterName]struct{}
}

func newReadyOrder[request reconcile.ClusterAware[request]]() readyOrder[request] {
	return readyOrder[request]{levels: map[int]*priorityLevel[request]{}, held: map[multicluster.ClusterName]struct{}{}}
}

// len returns the number of ready requests that can be handed out.
func (o *readyOrder[request]) len() int { return o.count }

// heldLen returns the number of ready requests held back.
func (o *readyOrder[request]) heldLen() int { return o.heldCount }

// push appends e to its cluster's sub-queue at its priority. A cluster new to the level joins at
// the end of the current round, so it waits at most one turn of every other cluster.
func (o *readyOrder[request]) push(e *entry[request]) {
	lvl := o.levels[e.priority]
	if lvl == nil {
		lvl = &priorityLevel[request]{priority: e.priority, clusters: map[multicluster.ClusterName]*clusterQueue[request]{}}
		o.levels[e.priority] = lvl
	}
	cq := lvl.clusters[e.cluster]
	if cq == nil {
		cq = &clusterQueue[request]{cluster: e.cluster, level: lvl}
		lvl.clusters[e.cluster] = cq
		if _, held := o.held[e.cluster]; held {
			cq.held = true
		} else {
			o.enterRound(cq)
		}
	}
	e.queue = cq
	e.prev, e.next = cq.tail, nil
	if cq.tail != nil {
		cq.tail.next = e
	} else {
		cq.head = e
	}
	cq.tail = e
	cq.len++
	if cq.held {
		o.heldCount++
	} else {
		o.count++
	}
}

// enterRound adds cq to its level's round, and the level to the priorities served.
func (o *readyOrder[request]) enterRound(cq *clusterQueue[request]) {
	lvl := cq.level
	if lvl.turn == nil {
		i, _ := slices.BinarySearchFunc(o.priorities, lvl.priority, func(have, want int) int { return cmp.Compare(want, have) })
		o.priorities = slices.Insert(o.priorities, i, lvl.priority)
	}
	lvl.join(cq)
}

// leaveRound takes cq out of its level's round, and the level out of the priorities served when
// no sub-queue is left in its round.
func (o *readyOrder[request]) leaveRound(cq *clusterQueue[request]) {
	lvl := cq.level
	lvl.leave(cq)
	if lvl.turn == nil {
		o.priorities = slices.DeleteFunc(o.priorities, func(p int) bool { return p == lvl.priority })
	}
}

// hold holds back cluster's ready requests, present and future, until release. They keep their
// order; nothing is copied, so holding a cluster costs one step per priority, not per request.
func (o *readyOrder[request]) hold(cluster multicluster.ClusterName) {
	if _, held := o.held[cluster]; held {
		return
	}
	o.held[cluster] = struct{}{}
	for _, lvl := range o.levels {
		if cq := lvl.clusters[cluster]; cq != nil {
			o.leaveRound(cq)
			cq.held = true
			o.count -= cq.len
			o.heldCount += cq.len
		}
	}
}

// release lets cluster's requests be handed out again; its sub-queues join the end of their
// rounds. It returns the number of requests released.
func (o *readyOrder[request]) release(cluster multicluster.ClusterName) int {
	if _, held := o.held[cluster]; !held {
		return 0
	}
	delete(o.held, cluster)
	released := 0
	for _, lvl := range o.levels {
		if cq := lvl.clusters[cluster]; cq != nil {
			cq.held = false
			o.enterRound(cq)
			o.count += cq.len
			o.heldCount -= cq.len
			released += cq.len
		}
	}
	return released
}

// removeCluster takes every ready request of cluster out, held back or not, and returns them.
func (o *readyOrder[request]) removeCluster(cluster multicluster.ClusterName) []*entry[request] {
	var removed []*entry[request]
	for _, lvl := range o.levels {
		// The last removal releases cq, and lvl when it empties; cq.head is nil then.
		for cq := lvl.clusters[cluster]; cq != nil && cq.head != nil; {
			e := cq.head
			removed = append(removed, e)
			o.remove(e)
		}
	}
	return removed
}

// pop removes and returns the next request to hand out, or nil.
func (o *readyOrder[request]) pop() *entry[request] {
	if o.count == 0 {
		return nil
	}
	lvl := o.levels[o.priorities[0]]
	cq := lvl.turn
	// The turn passes on whether or not cq has more requests.
	lvl.turn = cq.next
	e := cq.head
	o.remove(e)
	return e
}

// remove takes e out of its sub-queue and releases the sub-queue and level when they empty.
func (o *readyOrder[request]) remove(e *entry[request]) {
	cq := e.queue
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		cq.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		cq.tail = e.prev
	}
	e.queue, e.prev, e.next = nil, nil, nil
	cq.len--
	if cq.held {
		o.heldCount--
	} else {
		o.count--
	}
	if cq.head != nil {
		return
	}

	lvl := cq.level
	delete(lvl.clusters, cq.cluster)
	if !cq.held {
		o.leaveRound(cq)
	}
	cq.level = nil
	if len(lvl.clusters) == 0 {
		delete(o.levels, lvl.priority)
	}
}

// join adds cq to the round just before the cluster whose turn it is.
func (l *priorityLevel[request]) join(cq *clusterQueue[request]) {
	if l.turn == nil {
		cq.prev, cq.next = cq, cq
		l.turn = cq
		return
	}
	last := l.turn.prev
	last.next, cq.prev = cq, last
	cq.next, l.turn.prev = l.turn, cq
}

// leave removes cq from the round; if it was cq's turn, the next cluster's turn begins.
func (l *priorityLevel[request]) leave(cq *clusterQueue[request]) {
	if cq.next == cq {
		l.turn = nil
	} else {
		cq.prev.next, cq.next.prev = cq.next, cq.prev
		if l.turn == cq {
			l.turn = cq.next
		}
	}
	cq.prev, cq.next = nil, nil
}

// waitingHeap orders delayed requests by ready time, then by insertion. It implements
// container/heap.Interface.
type waitingHeap[request reconcile.ClusterAware[request]] []*entry[request]

func (h waitingHeap[request]) Len() int { return len(h) }

func (h waitingHeap[request]) Less(i, j int) bool {
	if !h[i].readyAt.Equal(h[j].readyAt) {
		return h[i].readyAt.Before(h[j].readyAt)
	}
	return h[i].seq < h[j].seq
}

func (h waitingHeap[request]) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIndex = i
	h[j].heapIndex = j
}

func (h *waitingHeap[request]) Push(x any) {
	e := x.(*entry[request])
	e.heapIndex = len(*h)
	*h = append(*h, e)
}

func (h *waitingHeap[request]) Pop() any {
	old := *h
	n := len(old) - 1
	e := old[n]
	old[n] = nil
	*h = old[:n]
	e.heapIndex = -1
	return e
}
