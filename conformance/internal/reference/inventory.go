// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package reference

import (
	"errors"
	"maps"
	"sync"
)

// ErrSourceDown is what Read returns while the inventory is down.
var ErrSourceDown = errors.New("reference inventory: the source of truth is down")

// Entry is one member in an Inventory.
type Entry struct {
	// Kubeconfig holds the member's endpoint and credentials.
	Kubeconfig []byte
	// Ready says whether the member may be engaged.
	Ready bool
	// Generation counts the writes of the entry, also those that change nothing.
	Generation int
}

// Inventory is an in-memory source of truth: member names and their entries. Providers watch
// it through Subscribe. It is safe for concurrent use.
type Inventory struct {
	mu      sync.Mutex
	entries map[string]Entry
	subs    map[chan struct{}]struct{}
	// engagedBy records which provider instances engaged each member, for RenameOnRestart.
	engagedBy map[string]map[*Provider]bool
	// down makes Read fail, like an API server that does not answer.
	down bool
}

// NewInventory returns an empty inventory.
func NewInventory() *Inventory {
	return &Inventory{entries: map[string]Entry{}, subs: map[chan struct{}]struct{}{}, engagedBy: map[string]map[*Provider]bool{}}
}

// Put creates or replaces the member's kubeconfig; a new member is ready.
func (inv *Inventory) Put(name string, kubeconfig []byte) {
	inv.update(name, func(e *Entry, exists bool) {
		if !exists {
			e.Ready = true
		}
		e.Kubeconfig = kubeconfig
	})
}

// Touch writes the entry again without changing it.
func (inv *Inventory) Touch(name string) { inv.update(name, func(*Entry, bool) {}) }

// SetReady changes the member's readiness.
func (inv *Inventory) SetReady(name string, ready bool) {
	inv.update(name, func(e *Entry, _ bool) { e.Ready = ready })
}

// Delete removes the member.
func (inv *Inventory) Delete(name string) {
	inv.mu.Lock()
	delete(inv.entries, name)
	inv.notifyLocked()
	inv.mu.Unlock()
}

func (inv *Inventory) update(name string, fn func(e *Entry, exists bool)) {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	e, exists := inv.entries[name]
	fn(&e, exists)
	e.Generation++
	inv.entries[name] = e
	inv.notifyLocked()
}

// Snapshot returns a copy of every entry.
func (inv *Inventory) Snapshot() map[string]Entry {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	return maps.Clone(inv.entries)
}

// Read returns a copy of every entry, or ErrSourceDown while the inventory is down.
func (inv *Inventory) Read() (map[string]Entry, error) {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	if inv.down {
		return nil, ErrSourceDown
	}
	return maps.Clone(inv.entries), nil
}

// SetDown takes the inventory down (Read fails) or brings it back, and notifies subscribers,
// as a watch that breaks or is re-established does.
func (inv *Inventory) SetDown(down bool) {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	inv.down = down
	inv.notifyLocked()
}

// Subscribe returns a channel that receives a value after every change (changes in quick
// succession may be merged), and a function that ends the subscription.
func (inv *Inventory) Subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	inv.mu.Lock()
	inv.subs[ch] = struct{}{}
	inv.mu.Unlock()
	return ch, func() {
		inv.mu.Lock()
		delete(inv.subs, ch)
		inv.mu.Unlock()
	}
}

func (inv *Inventory) notifyLocked() {
	for ch := range inv.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// recordEngaged notes that p engaged member, like a status a provider writes back.
func (inv *Inventory) recordEngaged(member string, p *Provider) {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	if inv.engagedBy[member] == nil {
		inv.engagedBy[member] = map[*Provider]bool{}
	}
	inv.engagedBy[member][p] = true
}

// engagedByOthers counts the provider instances other than p that engaged member.
func (inv *Inventory) engagedByOthers(member string, p *Provider) int {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	n := len(inv.engagedBy[member])
	if inv.engagedBy[member][p] {
		n--
	}
	return n
}
