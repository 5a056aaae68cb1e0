// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package cache

import (
	"context"
	"fmt"
	"sync/atomic"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"

	kcpcache "github.com/kcp-dev/apimachinery/v2/pkg/cache"
)

// Why this file exists: the informers of the Wildcard caches are kcp-dev/apimachinery's
// (v2.32.0), whose store cannot delete the DeletedFinalStateUnknown tombstone a relist makes
// for an object deleted while the watch was down (its key function takes objects only). Such an
// object stays in the cache, and no handler hears of its deletion: a logical cluster whose
// binding went during a shard outage would stay engaged. A TruthCheck finds those objects by
// listing live and removes them the way the informer should have.
//
// How a reconnect is noticed: the ListerWatcher the informer is built with is wrapped, and every
// list after the first (a List, or a watch that streams the initial list) is a relist. That is
// the ListerWatcher contract, which every reflector follows, rather than a hook into client-go's
// reflector or the fork's queue. A watch that resumes from its resource version is not a relist:
// the server sends the deletions it missed as events, which the informer handles.

// TruthCheck compares one informer of a Wildcard cache with a live list of its type.
type TruthCheck struct {
	kind     string // of the informer's objects, for the log
	lw       toolscache.ListerWatcherWithContext
	informer toolscache.SharedIndexInformer
	// notify distributes a delete notification to the informer's handlers, as the informer
	// does for the deletions it sees; nil when the informer has no such method.
	notify   toolscache.ResourceEventHandler
	onRelist func()

	listed   atomic.Bool // the first list is done
	relisted atomic.Bool // a relist happened since the last check
}

// relistWatcher is the ListerWatcher of one informer, which tells its TruthCheck about relists.
type relistWatcher struct {
	inner toolscache.ListerWatcherWithContext
	check *TruthCheck
}

var (
	_ toolscache.ListerWatcher            = relistWatcher{}
	_ toolscache.ListerWatcherWithContext = relistWatcher{}
)

func (w relistWatcher) List(opts metav1.ListOptions) (runtime.Object, error) {
	return w.ListWithContext(context.Background(), opts)
}

func (w relistWatcher) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return w.WatchWithContext(context.Background(), opts)
}

func (w relistWatcher) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	list, err := w.inner.ListWithContext(ctx, opts)
	// A paginated list counts once, with its first page.
	if err == nil && opts.Continue == "" {
		w.check.sawList()
	}
	return list, err
}

func (w relistWatcher) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	wi, err := w.inner.WatchWithContext(ctx, opts)
	if err == nil && opts.SendInitialEvents != nil && *opts.SendInitialEvents {
		w.check.sawList()
	}
	return wi, err
}

// IsWatchListSemanticsUnSupported keeps what the wrapped ListerWatcher says about streaming
// lists, so that wrapping changes nothing of how the reflector lists.
func (w relistWatcher) IsWatchListSemanticsUnSupported() bool {
	return watchlist.DoesClientNotSupportWatchListSemantics(w.inner)
}

// sawList records a list; from the second on, it marks the check due and tells onRelist.
func (c *TruthCheck) sawList() {
	if !c.listed.Swap(true) {
		return
	}
	c.relisted.Store(true)
	if c.onRelist != nil {
		c.onRelist()
	}
}

// takeRelisted reports whether a relist happened since the last call.
func (c *TruthCheck) takeRelisted() bool { return c.relisted.Swap(false) }

// Recheck makes the check due again, as a relist does: Relisted returns it next time.
func (c *TruthCheck) Recheck() { c.relisted.Store(true) }

// Kind returns the kind of the informer's objects, for logs.
func (c *TruthCheck) Kind() string { return c.kind }

// MissedDeletion is an object the informer kept although a live list no longer has it.
type MissedDeletion struct {
	Key string // in the informer's store
	Obj any
}

// Verify lists the informer's type live and removes from the informer's store every object the
// list no longer has, telling the informer's handlers of each deletion. An object counts as
// gone only when it was in the store before the list was sent and no object of the list has its
// UID: UIDs are never reused, so the server deleted it, whatever the informer has processed
// since; an object added to the store after the list was sent is never judged.
func (c *TruthCheck) Verify(ctx context.Context) ([]MissedDeletion, error) {
	store := c.informer.GetIndexer()
	before := map[string]types.UID{}
	for _, item := range store.List() {
		key, uid, ok := keyAndUID(item)
		if ok {
			before[key] = uid
		}
	}
	// The whole list at once: a consistent read of the current state, with the informer's
	// own selectors.
	list, err := c.lw.ListWithContext(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing live: %w", err)
	}
	live := map[types.UID]struct{}{}
	if err := apimeta.EachListItem(list, func(o runtime.Object) error {
		if m, err := apimeta.Accessor(o); err == nil {
			live[m.GetUID()] = struct{}{}
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("reading the live list: %w", err)
	}
	var missed []MissedDeletion
	for key, uid := range before {
		if _, ok := live[uid]; ok {
			continue
		}
		item, exists, err := store.GetByKey(key)
		if err != nil || !exists {
			continue // the informer deleted it meanwhile
		}
		if _, now, ok := keyAndUID(item); !ok || now != uid {
			continue // created again under the same name: the new object is not judged
		}
		// The informer may replace the object between GetByKey and Delete only if it was
		// created again under the same name in that instant; the new one would then be missing
		// from the store until it changes or the next relist. The store offers no
		// compare-and-delete, and the informer's own lock is not exported.
		if err := store.Delete(item); err != nil {
			return missed, fmt.Errorf("removing %s from the cache: %w", key, err)
		}
		if c.notify != nil {
			c.notify.OnDelete(toolscache.DeletedFinalStateUnknown{Key: key, Obj: item})
		}
		missed = append(missed, MissedDeletion{Key: key, Obj: item})
	}
	return missed, nil
}

// keyAndUID returns the store key and the UID of an object of an informer's store.
func keyAndUID(item any) (string, types.UID, bool) {
	m, err := apimeta.Accessor(item)
	if err != nil || m.GetUID() == "" {
		return "", "", false
	}
	key, err := kcpcache.MetaClusterNamespaceKeyFunc(item)
	if err != nil {
		return "", "", false
	}
	return key, m.GetUID(), true
}
