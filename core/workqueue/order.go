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

	// Neighbors in the level's round of clusters.
	prev, next *clusterQueue[request]
}

// priorityLevel holds the ready requests of one priority: a round of cluster sub-queues served in
// turn. It exists only while it holds a request.
type priorityLevel[request reconcile.ClusterAware[request]] struct {
	priority int
	clusters map[multicluster.ClusterName]*clusterQueue[request]
	// turn is the sub-queue served next; the round is a ring through clusterQueue.prev/next.
	turn *clusterQueue[request]
}

// readyOrder decides which ready request is handed out next: the highest priority first, within
// a priority one request per cluster per turn, within a cluster first in, first out.
type readyOrder[request reconcile.ClusterAware[request]] struct {
	levels map[int]*priorityLevel[request]
	// priorities lists the keys of levels, highest first. There are few distinct priorities, so
	// a sorted slice beats a heap.
	priorities []int
	count      int
}

func newReadyOrder[request reconcile.ClusterAware[request]]() readyOrder[request] {
	return readyOrder[request]{levels: map[int]*priorityLevel[request]{}}
}

// len returns the number of ready requests.
func (o *readyOrder[request]) len() int { return o.count }

// push appends e to its cluster's sub-queue at its priority. A cluster new to the level joins at
// the end of the current round, so it waits at most one turn of every other cluster.
func (o *readyOrder[request]) push(e *entry[request]) {
	lvl := o.levels[e.priority]
	if lvl == nil {
		lvl = &priorityLevel[request]{priority: e.priority, clusters: map[multicluster.ClusterName]*clusterQueue[request]{}}
		o.levels[e.priority] = lvl
		i, _ := slices.BinarySearchFunc(o.priorities, e.priority, func(have, want int) int { return cmp.Compare(want, have) })
		o.priorities = slices.Insert(o.priorities, i, e.priority)
	}
	cq := lvl.clusters[e.cluster]
	if cq == nil {
		cq = &clusterQueue[request]{cluster: e.cluster, level: lvl}
		lvl.clusters[e.cluster] = cq
		lvl.join(cq)
	}
	e.queue = cq
	e.prev, e.next = cq.tail, nil
	if cq.tail != nil {
		cq.tail.next = e
	} else {
		cq.head = e
	}
	cq.tail = e
	o.count++
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
	o.count--
	if cq.head != nil {
		return
	}

	lvl := cq.level
	delete(lvl.clusters, cq.cluster)
	lvl.leave(cq)
	if len(lvl.clusters) == 0 {
		delete(o.levels, lvl.priority)
		o.priorities = slices.DeleteFunc(o.priorities, func(p int) bool { return p == lvl.priority })
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
	cq.prev, cq.next, cq.level = nil, nil, nil
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
