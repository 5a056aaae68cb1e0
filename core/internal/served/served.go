// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package served notices when a cluster stops serving a kind that a source or a field index
// uses (its CRD deleted, its APIService removed), for core/source and core/clusters, which park
// what used the kind until it is served again.
//
// controller-runtime gives no signal for it: the kind's informer keeps listing and gets 404s,
// reported only to a watch error handler that can be set before the informer starts (the cache
// that owns it is built by a provider), and the cluster's REST mapper keeps mapping the kind.
// Watch therefore asks the cluster's discovery, one request per kind and interval, whether the
// kind is still served; kinds of the built-in API groups, which a running apiserver cannot stop
// serving, are never asked about. When the kind is gone, Watch tells its users and removes the
// kind's informer from the cache, which stops its failing lists. Until then nothing runs for
// the kind between two checks (a timer, no goroutine).
//
// Because the REST mapper still maps the kind, getting its informer again would start one that
// fails the same way; Check, called before that, tells a kind that went away and has not
// returned apart, with one discovery request, and costs nothing for every other kind.
package served

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
)

// DefaultInterval is how often a kind is checked when the context names no interval.
const DefaultInterval = 30 * time.Second

type intervalKey struct{}

// WithInterval returns ctx naming how often Watch, called with it, checks the kind.
func WithInterval(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, intervalKey{}, d)
}

func intervalFrom(ctx context.Context) time.Duration {
	if d, ok := ctx.Value(intervalKey{}).(time.Duration); ok && d > 0 {
		return d
	}
	return DefaultInterval
}

// key is one informer of one cluster: the cache keeps one per kind and object class.
type key struct {
	cluster cluster.Cluster
	gvk     schema.GroupVersionKind
	class   string
}

type registry struct {
	mu      sync.Mutex
	watches map[key]*watch
	gone    map[key]struct{} // kinds a watch saw go away and no Check saw return
}

var kinds = &registry{watches: map[key]*watch{}, gone: map[key]struct{}{}}

// watch checks one kind of one cluster for all its users.
type watch struct {
	key   key
	obj   client.Object
	disco discovery.DiscoveryInterface
	timer *time.Timer
	users map[*user]struct{} // guarded by registry.mu
}

type user struct {
	interval time.Duration
	gone     func(error)
}

// keyOf returns the key of obj's informer in cl, and false when obj's kind needs no watching:
// a built-in kind, or a cluster or kind that cannot be told apart.
func keyOf(cl cluster.Cluster, obj client.Object) (key, bool) {
	if cl == nil || !reflect.TypeOf(cl).Comparable() {
		return key{}, false
	}
	gvk, err := apiutil.GVKForObject(obj, cl.GetScheme())
	if err != nil || clientgoscheme.Scheme.IsGroupRegistered(gvk.Group) {
		return key{}, false
	}
	class := "typed"
	switch obj.(type) {
	case runtime.Unstructured:
		class = "unstructured"
	case *metav1.PartialObjectMetadata:
		class = "metadata"
	}
	return key{cluster: cl, gvk: gvk, class: class}, true
}

// Watch calls gone, once and from a goroutine of its own, when cl stops serving obj's kind,
// and then removes the kind's informer from cl's cache. It checks at the interval of ctx
// (WithInterval, DefaultInterval without) and stops when ctx ends. gone gets a
// *meta.NoKindMatchError; it must return quickly and should stop whatever uses the informer,
// which stops right after.
func Watch(ctx context.Context, cl cluster.Cluster, obj client.Object, gone func(error)) {
	k, ok := keyOf(cl, obj)
	if !ok || ctx.Err() != nil {
		return
	}
	u := &user{interval: intervalFrom(ctx), gone: gone}
	kinds.mu.Lock()
	w := kinds.watches[k]
	if w == nil {
		disco, err := discovery.NewDiscoveryClientForConfigAndClient(cl.GetConfig(), cl.GetHTTPClient())
		if err != nil {
			kinds.mu.Unlock()
			return
		}
		w = &watch{key: k, obj: obj, disco: disco, users: map[*user]struct{}{}}
		w.timer = time.AfterFunc(u.interval, w.check)
		kinds.watches[k] = w
	} else if u.interval < w.shortest() {
		w.timer.Reset(u.interval)
	}
	w.users[u] = struct{}{}
	kinds.mu.Unlock()

	context.AfterFunc(ctx, func() {
		kinds.mu.Lock()
		defer kinds.mu.Unlock()
		delete(w.users, u)
		if len(w.users) == 0 && kinds.watches[k] == w {
			w.timer.Stop()
			delete(kinds.watches, k)
		}
	})
}

// shortest is the shortest interval its users asked for; called with registry.mu held.
func (w *watch) shortest() time.Duration {
	d := time.Duration(0)
	for u := range w.users {
		if d == 0 || u.interval < d {
			d = u.interval
		}
	}
	return d
}

// check asks discovery about the kind, run by the timer, which it sets for the next check.
func (w *watch) check() {
	err := servedBy(w.disco, w.key.gvk)
	kinds.mu.Lock()
	if kinds.watches[w.key] != w {
		kinds.mu.Unlock()
		return
	}
	if !meta.IsNoMatchError(err) {
		// Served, or unknown (the cluster may be down): reported elsewhere.
		w.timer.Reset(w.shortest())
		kinds.mu.Unlock()
		return
	}
	delete(kinds.watches, w.key)
	kinds.gone[w.key] = struct{}{}
	users := w.users
	w.users = nil
	kinds.mu.Unlock()

	for u := range users {
		u.gone(err)
	}
	// After the users let go of it: a recovering watch would otherwise replace it at once.
	_ = w.key.cluster.GetCache().RemoveInformer(context.Background(), w.obj)
}

// Check returns nil unless a Watch saw cl stop serving obj's kind and the kind has not been
// seen served since: then it asks discovery, and returns a *meta.NoKindMatchError while the
// kind is still not served, or the error of discovery.
func Check(ctx context.Context, cl cluster.Cluster, obj client.Object) error {
	k, ok := keyOf(cl, obj)
	if !ok {
		return nil
	}
	kinds.mu.Lock()
	_, wasGone := kinds.gone[k]
	kinds.mu.Unlock()
	if !wasGone {
		return nil
	}
	disco, err := discovery.NewDiscoveryClientForConfigAndClient(cl.GetConfig(), cl.GetHTTPClient())
	if err != nil {
		return fmt.Errorf("asking whether the cluster serves %s: %w", k.gvk.GroupKind(), err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := servedBy(disco, k.gvk); err != nil {
		return err
	}
	kinds.mu.Lock()
	delete(kinds.gone, k)
	kinds.mu.Unlock()
	return nil
}

// Forget drops what is known of cl's kinds; called when cl is no longer used.
func Forget(cl cluster.Cluster) {
	kinds.mu.Lock()
	defer kinds.mu.Unlock()
	for k := range kinds.gone {
		if k.cluster == cl {
			delete(kinds.gone, k)
		}
	}
}

// servedBy asks discovery whether gvk is served: nil when it is, a *meta.NoKindMatchError when
// it is not, another error when discovery could not tell.
func servedBy(disco discovery.DiscoveryInterface, gvk schema.GroupVersionKind) error {
	notServed := &meta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: []string{gvk.Version}}
	list, err := disco.ServerResourcesForGroupVersion(gvk.GroupVersion().String())
	if apierrors.IsNotFound(err) {
		return notServed
	}
	if err != nil {
		return fmt.Errorf("asking whether the cluster serves %s: %w", gvk.GroupKind(), err)
	}
	for _, r := range list.APIResources {
		if r.Kind == gvk.Kind && (r.Group == "" || r.Group == gvk.Group) {
			return nil
		}
	}
	return notServed
}
