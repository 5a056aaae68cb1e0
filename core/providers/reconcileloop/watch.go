package reconcileloop

import (
	"context"
	"fmt"
	"time"

	toolscache "k8s.io/client-go/tools/cache"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Watch is one kind of object WatchHost watches on the host.
type Watch struct {
	// Object is an instance of the kind, e.g. &corev1.Secret{}. Its type must be in the host's
	// scheme.
	Object client.Object

	// Kind names the kind in errors.
	//
	// Defaults to the Go type of Object, e.g. "*v1.Secret".
	Kind string

	// Enqueue is called with every object the informer adds, updates or deletes (the object of
	// a deletion tombstone, when the final state is unknown). It typically maps the object to
	// a key and adds it to a Loop; it must not block.
	//
	// Required.
	Enqueue func(obj client.Object)

	// EnqueueOld also calls Enqueue with the old object of an update, for keys derived from
	// fields that may change (a label naming the object's owner, say).
	//
	// Defaults to false: only the new object.
	EnqueueOld bool

	// InformerHint and SyncHint say, in parentheses after the error, what is probably wrong when
	// the informer cannot be created (a CRD missing, a type missing from the scheme) or does
	// not sync in time (a CRD missing, no list and watch permission).
	//
	// Default to none.
	InformerHint string
	SyncHint     string
}

// WatchHost adds an event handler for each watch to host's informers and waits, at most
// timeout in all, until each has seen every existing object. provider names the provider in
// errors, e.g. "clusterapi provider". The returned func removes the handlers; on error none is
// left. When ctx ends first, the error wraps its cause.
func WatchHost(ctx context.Context, host cache.Informers, provider string, timeout time.Duration, watches ...Watch) (stop func(), err error) {
	waitCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	var stops []func()
	stop = func() {
		for _, s := range stops {
			s()
		}
	}
	for _, w := range watches {
		kind := w.Kind
		if kind == "" {
			kind = fmt.Sprintf("%T", w.Object)
		}
		informer, err := host.GetInformer(waitCtx, w.Object, cache.BlockUntilSynced(false))
		if err != nil {
			stop()
			return nil, fmt.Errorf("%s: getting the host's informer for %s%s: %w", provider, kind, hint(w.InformerHint), err)
		}
		enqueue := func(obj any) {
			if o, ok := ObjectOf(obj); ok {
				w.Enqueue(o)
			}
		}
		reg, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc: enqueue,
			UpdateFunc: func(oldObj, newObj any) {
				if w.EnqueueOld {
					enqueue(oldObj)
				}
				enqueue(newObj)
			},
			DeleteFunc: enqueue,
		})
		if err != nil {
			stop()
			return nil, fmt.Errorf("%s: watching the host's %s: %w", provider, kind, err)
		}
		stops = append(stops, func() { _ = informer.RemoveEventHandler(reg) })
		if !waitFor(waitCtx, reg.HasSynced) {
			stop()
			if ctx.Err() != nil {
				return nil, fmt.Errorf("%s: waiting for the host's %s: %w", provider, kind, context.Cause(ctx))
			}
			return nil, fmt.Errorf("%s: the host's %s did not sync within %s%s", provider, kind, timeout, hint(w.SyncHint))
		}
	}
	return stop, nil
}

// hint formats a hint for an error message.
func hint(h string) string {
	if h == "" {
		return ""
	}
	return " (" + h + ")"
}

// ObjectOf returns the object of an informer notification, unwrapping deletion tombstones; false
// when it is not a client.Object.
func ObjectOf(obj any) (client.Object, bool) {
	if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	o, ok := obj.(client.Object)
	return o, ok
}

// waitFor polls done until it reports true or ctx ends.
func waitFor(ctx context.Context, done func() bool) bool {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !done() {
		select {
		case <-ctx.Done():
			return done()
		case <-tick.C:
		}
	}
	return true
}
