// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package source

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// fastRecovery makes the tests' member watches notice an outage and a return in milliseconds.
var fastRecovery = recoveryTiming{
	healthy:     20 * time.Millisecond,
	returnFirst: 10 * time.Millisecond,
	returnMax:   20 * time.Millisecond,
	probe:       time.Second,
	stop:        5 * time.Second,
}

// fakeMember is the apiserver of a member as its informers and its probe see it: ConfigMaps
// with resource versions, watches, and an outage switch. While it is down, lists, watches and
// the probe fail as against a stopped apiserver (connection refused), but the test can still
// change its objects, as others would through an apiserver the informer cannot reach.
type fakeMember struct {
	mu       sync.Mutex
	down     bool
	rv       int
	objects  map[string]*corev1.ConfigMap
	watchers []*watch.RaceFreeFakeWatcher
	lists    int

	probeFails atomic.Bool // the probe fails although the member is up
}

func newFakeMember() *fakeMember {
	return &fakeMember{objects: map[string]*corev1.ConfigMap{}}
}

var errRefused = &url.Error{Op: "Get", URL: "https://member", Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}

// listWatch is a lister-watcher without streaming lists (the fake watch does not send initial
// events), as client-go's fake clients are.
type listWatch struct{ *toolscache.ListWatch }

func (listWatch) IsWatchListSemanticsUnSupported() bool { return true }

func (f *fakeMember) listerWatcher() toolscache.ListerWatcher {
	return listWatch{&toolscache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.down {
				return nil, errRefused
			}
			f.lists++
			list := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.Itoa(f.rv)}}
			for _, cm := range f.objects {
				list.Items = append(list.Items, *cm.DeepCopy())
			}
			return list, nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.down {
				return nil, errRefused
			}
			w := watch.NewRaceFreeFake()
			f.watchers = append(f.watchers, w)
			return w, nil
		},
	}}
}

// set creates or updates a ConfigMap at the next resource version.
func (f *fakeMember) set(name, value string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rv++
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: strconv.Itoa(f.rv)},
		Data:       map[string]string{"v": value},
	}
	_, exists := f.objects[name]
	f.objects[name] = cm
	for _, w := range f.watchers {
		if exists {
			w.Modify(cm.DeepCopy())
		} else {
			w.Add(cm.DeepCopy())
		}
	}
}

func (f *fakeMember) remove(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rv++
	cm := f.objects[name].DeepCopy()
	cm.ResourceVersion = strconv.Itoa(f.rv)
	delete(f.objects, name)
	for _, w := range f.watchers {
		w.Delete(cm)
	}
}

// setDown stops (true) or starts the member; stopping ends every watch.
func (f *fakeMember) setDown(down bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.down = down
	if down {
		for _, w := range f.watchers {
			w.Stop()
		}
		f.watchers = nil
	}
}

func (f *fakeMember) isDown() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.down
}

func (f *fakeMember) listCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lists
}

// probe answers /readyz as the member would: 200 when up, no answer (a closed connection)
// when down.
func (f *fakeMember) probe(w http.ResponseWriter, _ *http.Request) {
	if f.probeFails.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	if f.isDown() {
		hj, ok := w.(http.Hijacker)
		if ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				return
			}
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// fakeCache is the part of a controller-runtime informer cache the member watches use: one
// running client-go shared informer per type, which RemoveInformer stops and forgets.
type fakeCache struct {
	cache.Cache
	member *fakeMember

	mu       sync.Mutex
	informer toolscache.SharedIndexInformer
	stop     chan struct{}
	removed  int
}

func (c *fakeCache) GetInformer(context.Context, client.Object, ...cache.InformerGetOption) (cache.Informer, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.informer == nil {
		c.informer = toolscache.NewSharedIndexInformer(c.member.listerWatcher(), &corev1.ConfigMap{}, 0,
			toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
		c.stop = make(chan struct{})
		go c.informer.Run(c.stop)
	}
	return c.informer, nil
}

func (c *fakeCache) RemoveInformer(context.Context, client.Object) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.informer != nil {
		close(c.stop)
		c.informer = nil
		c.removed++
	}
	return nil
}

func (c *fakeCache) removals() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.removed
}

func (c *fakeCache) current() toolscache.SharedIndexInformer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.informer
}

// events is a handler that writes down what it is handed.
type events struct {
	mu  sync.Mutex
	got []string
}

func (e *events) add(format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, fmt.Sprintf(format, args...))
}

func (e *events) OnAdd(obj any, isInInitialList bool) {
	cm := obj.(*corev1.ConfigMap)
	e.add("add %s=%s initial=%t", cm.Name, cm.Data["v"], isInInitialList)
}

func (e *events) OnUpdate(oldObj, newObj any) {
	o, n := oldObj.(*corev1.ConfigMap), newObj.(*corev1.ConfigMap)
	e.add("update %s=%s->%s", n.Name, o.Data["v"], n.Data["v"])
}

func (e *events) OnDelete(obj any) {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		e.add("delete %s=%s unknown", t.Key, t.Obj.(*corev1.ConfigMap).Data["v"])
		return
	}
	cm := obj.(*corev1.ConfigMap)
	e.add("delete %s=%s", cm.Name, cm.Data["v"])
}

// take returns the events handed over so far, sorted, and forgets them.
func (e *events) take() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	got := e.got
	e.got = nil
	slices.Sort(got)
	return got
}

func (e *events) snapshot() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.got)
}

func (e *events) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.got)
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type recoveryFixture struct {
	member   *fakeMember
	cache    *fakeCache
	registry *memberRegistry
	ref      *memberRef
}

func newRecoveryFixture(t *testing.T) *recoveryFixture {
	t.Helper()
	f := &recoveryFixture{member: newFakeMember()}
	srv := httptest.NewServer(http.HandlerFunc(f.member.probe))
	t.Cleanup(srv.Close)
	f.cache = &fakeCache{member: f.member}
	t.Cleanup(func() { _ = f.cache.RemoveInformer(context.Background(), nil) })
	f.registry = &memberRegistry{timing: fastRecovery, byCache: map[cache.Cache]*memberWatches{}}
	f.ref = &memberRef{cache: f.cache, readyz: srv.URL + "/readyz", client: srv.Client()}
	return f
}

func (f *recoveryFixture) register(ctx context.Context, t *testing.T, h toolscache.ResourceEventHandler) toolscache.ResourceEventHandlerRegistration {
	t.Helper()
	reg, ok, err := f.registry.register(ctx, f.ref, &corev1.ConfigMap{}, h)
	if err != nil || !ok {
		t.Fatalf("register: ok=%v err=%v", ok, err)
	}
	eventually(t, "the handler to sync", reg.HasSynced)
	return reg
}

// A member that comes back from an outage has its informer restarted at once, and its handlers
// receive what a resumed watch would have brought them, although client-go's own watch is
// still backing off: creates for objects created meanwhile (not marked as initial list),
// updates from the last state they saw, deletes (state unknown) for objects deleted meanwhile,
// and nothing for objects that did not change. The field indexes move to the new informer.
func TestMemberReturnRestartsInformer(t *testing.T) {
	f := newRecoveryFixture(t)
	for _, name := range []string{"same", "changed", "deleted"} {
		f.member.set(name, "1")
	}
	first, second := &events{}, &events{}
	f.register(t.Context(), t, first)
	f.register(t.Context(), t, second)
	want := []string{"add changed=1 initial=true", "add deleted=1 initial=true", "add same=1 initial=true"}
	for _, h := range []*events{first, second} {
		if got := h.take(); !slices.Equal(got, want) {
			t.Fatalf("initial list: got %q, want %q", got, want)
		}
	}
	byValue := func(obj any) ([]string, error) { return []string{obj.(*corev1.ConfigMap).Data["v"]}, nil }
	if err := f.cache.current().AddIndexers(toolscache.Indexers{"field:v": byValue}); err != nil {
		t.Fatal(err)
	}

	f.member.setDown(true)
	// Long enough for the member watches to notice the outage and for the informer's own
	// watch to start backing off.
	time.Sleep(200 * time.Millisecond)
	f.member.set("changed", "2")
	f.member.remove("deleted")
	f.member.set("created", "1")
	lists := f.member.listCount()
	f.member.setDown(false)

	eventually(t, "the restart", func() bool { return f.cache.removals() == 1 && first.count() == 3 && second.count() == 3 })
	want = []string{"add created=1 initial=false", "delete ns/deleted=1 unknown", "update changed=1->2"}
	for _, h := range []*events{first, second} {
		if got := h.take(); !slices.Equal(got, want) {
			t.Fatalf("after the return: got %q, want %q", got, want)
		}
	}
	if n := f.member.listCount() - lists; n != 1 {
		t.Fatalf("the member was listed %d times after its return, want once", n)
	}
	informer := f.cache.current()
	if _, ok := informer.GetIndexer().GetIndexers()["field:v"]; !ok {
		t.Fatal("the field index was not copied to the restarted informer")
	}
	if objs, err := informer.GetIndexer().ByIndex("field:v", "2"); err != nil || len(objs) != 1 {
		t.Fatalf("index lookup on the restarted informer: %d objects, %v", len(objs), err)
	}

	// The restarted informer's watch delivers as usual, also to the second handler.
	f.member.set("changed", "3")
	eventually(t, "the update after the restart", func() bool { return first.count() == 1 && second.count() == 1 })
	for _, h := range []*events{first, second} {
		if got := h.take(); !slices.Equal(got, []string{"update changed=2->3"}) {
			t.Fatalf("after the restart: got %q", got)
		}
	}
}

// An informer whose watch resumed on its own (it received events after the member stopped
// answering the probe) is not restarted.
func TestInformerThatResumedIsNotRestarted(t *testing.T) {
	f := newRecoveryFixture(t)
	f.member.set("a", "1")
	h := &events{}
	f.register(t.Context(), t, h)
	h.take()

	// Only the probe fails; the watch goes on and delivers.
	f.member.probeFails.Store(true)
	time.Sleep(100 * time.Millisecond)
	f.member.set("a", "2")
	eventually(t, "the update", func() bool { return h.count() == 1 })
	f.member.probeFails.Store(false)
	time.Sleep(200 * time.Millisecond)
	if n := f.cache.removals(); n != 0 {
		t.Fatalf("the informer was restarted %d times, want none", n)
	}
}

// The member watches stop probing once the last handler is gone, and forget the member.
func TestMemberWatchesEndWithLastHandler(t *testing.T) {
	f := newRecoveryFixture(t)
	ctx1, cancel1 := context.WithCancel(t.Context())
	ctx2, cancel2 := context.WithCancel(t.Context())
	f.register(ctx1, t, &events{})
	f.register(ctx2, t, &events{})
	m := f.registry.byCache[f.cache]
	if m == nil || m.users != 2 {
		t.Fatalf("member watches %+v, want one with two users", m)
	}
	cancel1()
	eventually(t, "the first handler's removal", func() bool {
		f.registry.mu.Lock()
		defer f.registry.mu.Unlock()
		return m.users == 1
	})
	select {
	case <-m.done:
		t.Fatal("the member watches stopped while a handler remains")
	default:
	}
	cancel2()
	select {
	case <-m.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the member watches did not stop after the last handler was removed")
	}
	f.registry.mu.Lock()
	defer f.registry.mu.Unlock()
	if len(f.registry.byCache) != 0 {
		t.Fatal("the member is still registered")
	}
}

// wrappedCache is the same cache reached through another value, as a cluster that wraps its
// cache per caller would hand it out.
type wrappedCache struct{ *fakeCache }

// Member watches that reach the same cache through different values each restart the
// informer once between them, and each handler resumes.
func TestSameCacheThroughTwoWrappers(t *testing.T) {
	f := newRecoveryFixture(t)
	f.member.set("changed", "1")
	direct, wrapped := &events{}, &events{}
	f.register(t.Context(), t, direct)
	other := *f.ref
	other.cache = wrappedCache{f.cache}
	reg, ok, err := f.registry.register(t.Context(), &other, &corev1.ConfigMap{}, wrapped)
	if err != nil || !ok {
		t.Fatalf("register: ok=%v err=%v", ok, err)
	}
	eventually(t, "the handler to sync", reg.HasSynced)
	if n := len(f.registry.byCache); n != 2 {
		t.Fatalf("%d member watches, want 2", n)
	}
	direct.take()
	wrapped.take()

	f.member.setDown(true)
	time.Sleep(200 * time.Millisecond)
	f.member.set("changed", "2")
	f.member.set("created", "1")
	f.member.setDown(false)
	// When both restart at the same moment, one may remove the informer the other just got;
	// its handlers then move on at the next probe, with an update for every object (the
	// state they saw is no longer known to be exact).
	want := []string{"add created=1 initial=false", "update changed=1->2"}
	for _, h := range []*events{direct, wrapped} {
		eventually(t, "the handler to resume", func() bool {
			got := h.snapshot()
			return slices.Contains(got, want[0]) && slices.Contains(got, want[1])
		})
	}
	direct.take()
	wrapped.take()
	f.member.set("changed", "3")
	for _, h := range []*events{direct, wrapped} {
		eventually(t, "the update after the restart", func() bool {
			return slices.Contains(h.snapshot(), "update changed=2->3")
		})
	}
}
