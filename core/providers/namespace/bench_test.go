// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package namespace

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
)

// fedInformer is a real client-go shared informer whose watch is fed by the benchmark, so that
// events travel the informer's own path (reflector, queue, processor) without an apiserver in
// the measurement.
func fedInformer(b *testing.B) (toolscache.SharedIndexInformer, *watch.FakeWatcher) {
	b.Helper()
	feed := watch.NewFake()
	lw := &toolscache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}, nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			return feed, nil
		},
	}
	informer := toolscache.NewSharedIndexInformer(listThenWatch{lw}, &corev1.ConfigMap{}, 0,
		toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
	ctx, cancel := context.WithCancel(context.Background())
	go informer.RunWithContext(ctx)
	b.Cleanup(cancel)
	if !toolscache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		b.Fatal("informer did not sync")
	}
	return informer, feed
}

// listThenWatch makes the reflector list and then watch, instead of asking the feed for a
// streaming list it does not implement.
type listThenWatch struct{ *toolscache.ListWatch }

func (listThenWatch) IsWatchListSemanticsUnSupported() bool { return true }

// counter is an event handler that counts deliveries.
type counter struct{ n *atomic.Int64 }

func (c counter) OnAdd(any, bool)   { c.n.Add(1) }
func (c counter) OnUpdate(any, any) { c.n.Add(1) }
func (c counter) OnDelete(any)      { c.n.Add(1) }
func (c counter) count() int64      { return c.n.Load() }
func newCounter() counter           { return counter{n: &atomic.Int64{}} }
func namespaceName(i int) string    { return fmt.Sprintf("tenant-%d", i) }
func objectIn(ns string, i int) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("cm-%d", i), ResourceVersion: fmt.Sprint(i + 2)}}
}

// feedAndWait sends b.N adds spread over the namespaces and waits until all were delivered,
// reporting the cost per event.
func feedAndWait(b *testing.B, feed *watch.FakeWatcher, namespaces int, delivered counter) {
	b.Helper()
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		feed.Add(objectIn(namespaceName(i%namespaces), i))
	}
	for delivered.count() < int64(b.N) {
		time.Sleep(50 * time.Microsecond)
	}
	b.StopTimer()
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N), "ns/event")
}

// BenchmarkDispatch measures the cost of one event with one namespace-cluster handler per
// namespace: the provider's single registration finds the event's handlers by map lookup, so the
// cost stays flat as namespaces grow.
func BenchmarkDispatch(b *testing.B) {
	for _, namespaces := range []int{10, 100, 500} {
		b.Run(fmt.Sprintf("namespaces=%d", namespaces), func(b *testing.B) {
			informer, feed := fedInformer(b)
			d, err := newDispatcher(informer)
			if err != nil {
				b.Fatal(err)
			}
			delivered := newCounter()
			for i := range namespaces {
				d.add(namespaceName(i), true, delivered)
			}
			feedAndWait(b, feed, namespaces, delivered)
		})
	}
}

// BenchmarkDispatchOneRegistrationPerNamespace is the approach this provider avoids, for
// comparison: every namespace-cluster registers its own filtering handler on the host informer,
// so every event is handed to every namespace.
func BenchmarkDispatchOneRegistrationPerNamespace(b *testing.B) {
	for _, namespaces := range []int{10, 100, 500} {
		b.Run(fmt.Sprintf("namespaces=%d", namespaces), func(b *testing.B) {
			informer, feed := fedInformer(b)
			delivered := newCounter()
			for i := range namespaces {
				ns := namespaceName(i)
				_, err := informer.AddEventHandler(toolscache.FilteringResourceEventHandler{
					FilterFunc: func(obj any) bool { return namespaceOf(obj) == ns },
					Handler:    delivered,
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			feedAndWait(b, feed, namespaces, delivered)
		})
	}
}

// BenchmarkDispatcherStep isolates the dispatch step itself (lookup, deep copy, rewrite, handler
// call), without the informer's queues, so scheduling noise on a busy machine matters less.
func BenchmarkDispatcherStep(b *testing.B) {
	for _, namespaces := range []int{10, 100, 500} {
		b.Run(fmt.Sprintf("namespaces=%d", namespaces), func(b *testing.B) {
			informer, _ := fedInformer(b)
			d, err := newDispatcher(informer)
			if err != nil {
				b.Fatal(err)
			}
			delivered := newCounter()
			objs := make([]*corev1.ConfigMap, namespaces)
			for i := range namespaces {
				d.add(namespaceName(i), true, delivered)
				objs[i] = objectIn(namespaceName(i), i)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				d.onAdd(objs[i%namespaces], false)
			}
			b.StopTimer()
			if delivered.count() != int64(b.N) {
				b.Fatalf("delivered %d events, want %d", delivered.count(), b.N)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/event")
		})
	}
}
