// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package source

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// Watch recovery. client-go retries a watch that fails with "connection refused" on its own,
// after an exponential backoff that reaches 30 s, jittered up to 60 s, within a minute of
// failures, and it tells nobody: the reflector neither calls its watch error handler nor
// changes anything a handler can see. A member that comes back after an outage is therefore
// watched again only when that backoff ends, up to a minute later, and the objects written to
// it meanwhile wait as long.
//
// The Kind sources of one member cache share a memberWatches. It probes the member (GET
// /readyz with the member's own HTTP client) while its informers show no progress, and when a
// member that stopped answering answers again it restarts, at once, the informers mcr's
// handlers are registered on: it removes each from the cache, gets a new one, copies the field
// indexes over and registers the same handlers on it. The new informer lists the member; what
// the handlers receive is what a resumed watch would have brought: objects created meanwhile
// as creates, changed ones as updates from the last state the handlers saw, deleted ones as
// deletes with DeleteStateUnknown, and nothing for objects that did not change.

// recoveryTiming is the pace of a memberWatches.
type recoveryTiming struct {
	// healthy is how often a member whose informers made no progress is probed: outages
	// shorter than this may go unnoticed, and client-go's backoff after them is as short.
	healthy time.Duration
	// returnFirst and returnMax bound the backoff of the probes of a member that does not
	// answer: its return is noticed at most returnMax late.
	returnFirst, returnMax time.Duration
	// probe bounds one probe: a member that does not answer within it is down.
	probe time.Duration
	// stop bounds the wait for a removed informer to stop.
	stop time.Duration
}

var defaultRecoveryTiming = recoveryTiming{
	healthy:     5 * time.Second,
	returnFirst: 250 * time.Millisecond,
	returnMax:   2 * time.Second,
	probe:       5 * time.Second,
	stop:        10 * time.Second,
}

// memberRef is what a memberWatches needs of a cluster: its cache and a way to probe it.
type memberRef struct {
	cache  cache.Cache
	readyz string
	client *http.Client
}

// recoverableMember returns the memberRef of cl, or nil when its watches are left to client-go:
// the manager's own cluster (the host), on whose informers providers and other components
// register handlers that a restart would drop, clusters without an HTTP client or config, and
// caches that cannot be told apart.
func recoverableMember(cl cluster.Cluster) *memberRef {
	if _, host := cl.(manager.Manager); host {
		return nil
	}
	c, hc, cfg := cl.GetCache(), cl.GetHTTPClient(), cl.GetConfig()
	if c == nil || hc == nil || cfg == nil || !reflect.TypeOf(c).Comparable() {
		return nil
	}
	base, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return nil
	}
	return &memberRef{cache: c, readyz: base.JoinPath("readyz").String(), client: hc}
}

// memberRegistry holds the memberWatches of every member cache some Kind source watches.
type memberRegistry struct {
	timing recoveryTiming

	mu      sync.Mutex
	byCache map[cache.Cache]*memberWatches
}

var members = &memberRegistry{timing: defaultRecoveryTiming, byCache: map[cache.Cache]*memberWatches{}}

// register registers h on obj's informer in the member's cache through the member's
// memberWatches, which restarts the informer when the member returns from an outage. It
// reports false, having registered nothing, when the cache's informer is not a client-go shared
// informer (a scoped or multi-namespace view): the caller registers h directly then. The
// registration is removed when ctx ends.
func (r *memberRegistry) register(ctx context.Context, ref *memberRef, obj client.Object, h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, bool, error) {
	// This GetInformer may wait for the member (to map the type); the one in add, under
	// the memberWatches' lock, then answers from the cache.
	informer, err := ref.cache.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
	if err != nil {
		return nil, false, fmt.Errorf("getting informer for %T: %w", obj, err)
	}
	if _, ok := informer.(toolscache.SharedIndexInformer); !ok {
		return nil, false, nil
	}
	m := r.acquire(ctx, ref)
	mh, reg, err := m.add(ctx, obj, h)
	if err != nil {
		r.release(m)
		return nil, false, err
	}
	context.AfterFunc(ctx, func() {
		m.remove(mh)
		r.release(m)
	})
	return reg, true, nil
}

// acquire returns the member's memberWatches, creating and starting it for the first user.
func (r *memberRegistry) acquire(ctx context.Context, ref *memberRef) *memberWatches {
	r.mu.Lock()
	defer r.mu.Unlock()
	m, ok := r.byCache[ref.cache]
	if !ok {
		m = newMemberWatches(ctx, ref, r.timing)
		r.byCache[ref.cache] = m
	}
	m.users++
	return m
}

// release drops a user of m; the last one stops it.
func (r *memberRegistry) release(m *memberWatches) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m.users--
	if m.users > 0 {
		return
	}
	if r.byCache[m.ref.cache] == m {
		delete(r.byCache, m.ref.cache)
	}
	m.stop()
}

// memberWatches is what the Kind sources of one member cache share: the informers their
// handlers are registered on, and the probe that restarts those informers when the member
// returns from an outage.
type memberWatches struct {
	ref      *memberRef
	timing   recoveryTiming
	log      logr.Logger
	ctx      context.Context // ends with stop
	cancel   context.CancelFunc
	timer    *time.Timer // runs tick
	done     chan struct{}
	doneOnce sync.Once
	users    int // guarded by memberRegistry.mu

	// stepMu serializes the ticks (the timer never runs two at once; the lock makes that
	// visible) and guards what only they touch.
	stepMu    sync.Mutex
	downSince time.Time // when the member stopped answering; zero while it answers
	backoff   time.Duration

	mu       sync.Mutex
	kinds    []*watchedKind
	progress []string // the kinds' resource versions at the last probe
}

// watchedKind is one informer of the member's cache with the handlers mcr registered on it.
type watchedKind struct {
	obj      client.Object
	informer toolscache.SharedIndexInformer // nil while a restart could not get a new one
	handlers map[*memberHandler]struct{}
	// outageRV is the informer's resource version when the member stopped answering: an
	// informer still at it has received nothing since.
	outageRV string
	// pending is the state to resume from when informer is nil.
	pending *resumeState
}

// memberHandler is one handler registered through the memberWatches.
type memberHandler struct {
	// ctx ends when the handler's source stops; its removal follows shortly after.
	ctx     context.Context
	handler toolscache.ResourceEventHandler
	reg     toolscache.ResourceEventHandlerRegistration // on the kind's current informer
	kind    *watchedKind
	removed chan struct{}
}

func newMemberWatches(ctx context.Context, ref *memberRef, timing recoveryTiming) *memberWatches {
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	m := &memberWatches{
		ref:    ref,
		timing: timing,
		log:    logr.FromContextOrDiscard(ctx),
		ctx:    runCtx,
		cancel: cancel,
		done:   make(chan struct{}),
	}
	// A timer rather than a goroutine: between probes nothing runs for the member.
	m.timer = time.AfterFunc(time.Hour, m.tick)
	m.timer.Reset(timing.healthy)
	return m
}

// stop ends the probes; done is closed once none runs or will run.
func (m *memberWatches) stop() {
	m.cancel()
	if m.timer.Stop() {
		m.finished()
	}
}

func (m *memberWatches) finished() { m.doneOnce.Do(func() { close(m.done) }) }

// tick is one step of the probes, run by the timer, which it sets for the next step.
func (m *memberWatches) tick() {
	m.stepMu.Lock()
	defer m.stepMu.Unlock()
	if m.ctx.Err() == nil {
		next := m.step(m.ctx)
		if m.ctx.Err() == nil {
			m.timer.Reset(next)
			return
		}
	}
	m.finished()
}

// add registers h on the cache's informer of obj.
func (m *memberWatches) add(ctx context.Context, obj client.Object, h toolscache.ResourceEventHandler) (*memberHandler, toolscache.ResourceEventHandlerRegistration, error) {
	// Under the lock no restart replaces the informer between getting it and registering on
	// it; the type is mapped already, so the cache answers without a request.
	m.mu.Lock()
	defer m.mu.Unlock()
	got, err := m.ref.cache.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
	if err != nil {
		return nil, nil, fmt.Errorf("getting informer for %T: %w", obj, err)
	}
	informer, ok := got.(toolscache.SharedIndexInformer)
	if !ok {
		return nil, nil, fmt.Errorf("informer for %T is a %T, not a shared informer", obj, got)
	}
	var k *watchedKind
	for _, candidate := range m.kinds {
		if candidate.informer == informer {
			k = candidate
			break
		}
	}
	if k == nil {
		k = &watchedKind{obj: obj, informer: informer, handlers: map[*memberHandler]struct{}{}}
		m.kinds = append(m.kinds, k)
	}
	reg, err := informer.AddEventHandlerWithOptions(h, toolscache.HandlerOptions{})
	if err != nil {
		if len(k.handlers) == 0 {
			m.dropKind(k)
		}
		return nil, nil, fmt.Errorf("registering handler for %T: %w", obj, err)
	}
	mh := &memberHandler{ctx: ctx, handler: h, reg: reg, kind: k, removed: make(chan struct{})}
	k.handlers[mh] = struct{}{}
	return mh, reg, nil
}

// remove removes the handler from its informer.
func (m *memberWatches) remove(mh *memberHandler) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := mh.kind
	if k.informer != nil {
		_ = k.informer.RemoveEventHandler(mh.reg)
	}
	delete(k.handlers, mh)
	close(mh.removed)
	if len(k.handlers) == 0 {
		m.dropKind(k)
	}
}

func (m *memberWatches) dropKind(k *watchedKind) {
	for i, candidate := range m.kinds {
		if candidate == k {
			m.kinds = append(m.kinds[:i:i], m.kinds[i+1:]...)
			return
		}
	}
}

// step probes the member, every timing.healthy while it answers and with backoff while it
// does not, and restarts its informers when it answers again. It returns when to step next.
func (m *memberWatches) step(ctx context.Context) time.Duration {
	if m.downSince.IsZero() {
		m.reattach(ctx)
		if m.progressed() || m.answers(ctx) || ctx.Err() != nil {
			return m.timing.healthy
		}
		m.outageBegins()
		m.log.Info("Member does not answer; its watches will be restarted as soon as it does", "probe", m.ref.readyz)
		m.downSince, m.backoff = time.Now(), m.timing.returnFirst
		return m.backoff
	}
	// Progress of an informer means its watch resumed on its own: the member serves it.
	if !m.progressed() && !m.answers(ctx) {
		m.backoff = min(2*m.backoff, m.timing.returnMax)
		return m.backoff
	}
	if ctx.Err() != nil {
		return m.timing.healthy
	}
	restarted := m.restart(ctx)
	m.log.Info("Member answers again; restarted its watches", "down", time.Since(m.downSince).Round(time.Millisecond), "informers", restarted)
	m.downSince = time.Time{}
	return m.timing.healthy
}

// progressed reports whether any informer's resource version moved since the last call: the
// member answered its watches, so there is no need to probe it.
func (m *memberWatches) progressed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := make([]string, 0, len(m.kinds))
	for _, k := range m.kinds {
		if k.informer != nil {
			now = append(now, k.informer.LastSyncResourceVersion())
		}
	}
	moved := len(now) == len(m.progress)
	if moved {
		moved = false
		for i := range now {
			if now[i] != m.progress[i] && now[i] != "" {
				moved = true
			}
		}
	}
	m.progress = now
	return moved
}

// answers probes the member: it answers when it returns any HTTP status below 500 within
// timing.probe. A 404 or 403 (a proxy without /readyz, credentials that may not read it) still
// shows the member serves requests.
func (m *memberWatches) answers(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, m.timing.probe)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.ref.readyz, nil)
	if err != nil {
		return false
	}
	resp, err := m.ref.client.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	_ = resp.Body.Close()
	return resp.StatusCode < http.StatusInternalServerError
}

// outageBegins notes every informer's resource version.
func (m *memberWatches) outageBegins() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, k := range m.kinds {
		if k.informer != nil {
			k.outageRV = k.informer.LastSyncResourceVersion()
		}
	}
}

// restart restarts every informer that needs it, and returns how many it restarted.
func (m *memberWatches) restart(ctx context.Context) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, k := range m.kinds {
		if k.informer == nil || k.stopping() || !m.needsRestart(k) {
			continue
		}
		old := k.informer
		// Remove only the informer the handlers are on; one the cache replaced already (the
		// same cache reached through another wrapper restarted it) is the new one.
		current, err := m.ref.cache.GetInformer(ctx, k.obj, cache.BlockUntilSynced(false))
		if err == nil && current == cache.Informer(old) {
			err = m.ref.cache.RemoveInformer(ctx, k.obj)
		}
		if err != nil {
			m.log.Error(err, "Cannot restart the informer; it resumes on client-go's backoff", "kind", fmt.Sprintf("%T", k.obj))
			continue
		}
		n++
		k.informer = nil
		k.pending = m.snapshot(old)
		// Only a stopped informer that received nothing during the outage is known to have
		// handed every object in its store to the handlers.
		k.pending.exact = old.IsStopped() && old.LastSyncResourceVersion() == k.outageRV
		m.attach(ctx, k)
	}
	return n
}

// needsRestart reports whether the informer should be restarted: it has synced, with every
// handler, before the outage (a restart before would leave readers waiting for the old one),
// and has received nothing since the outage began (one that has resumed on its own is fine).
func (m *memberWatches) needsRestart(k *watchedKind) bool {
	if !k.informer.HasSynced() || k.informer.LastSyncResourceVersion() != k.outageRV {
		return false
	}
	for mh := range k.handlers {
		if !mh.reg.HasSynced() {
			return false
		}
	}
	return true
}

// snapshot waits (bounded) for the removed informer to stop and returns its last state, with
// its field indexes, for the handlers to resume from.
func (m *memberWatches) snapshot(old toolscache.SharedIndexInformer) *resumeState {
	deadline := time.Now().Add(m.timing.stop)
	for !old.IsStopped() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	s := &resumeState{objects: map[string]any{}, indexers: old.GetIndexer().GetIndexers()}
	for _, obj := range old.GetStore().List() {
		if key, err := toolscache.MetaNamespaceKeyFunc(obj); err == nil {
			s.objects[key] = obj
		}
	}
	return s
}

// reattach moves the handlers of informers that stopped under them (removed by a restart of
// the same cache reached through another value, or by anyone's RemoveInformer) to the cache's
// current informer, and retries attach for kinds whose restart could not get one.
func (m *memberWatches) reattach(ctx context.Context) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, k := range m.kinds {
		if k.informer != nil && k.informer.IsStopped() {
			old := k.informer
			k.informer = nil
			// Not exact: the old informer may have dropped notifications when it stopped.
			k.pending = m.snapshot(old)
		}
		if k.informer == nil && !k.stopping() {
			m.attach(ctx, k)
		}
	}
}

// stopping reports whether every source with a handler on k has stopped: a source whose kind
// is no longer served stops before its informer is removed, and no new informer may replace
// that one (it would fail as the old one did).
func (k *watchedKind) stopping() bool {
	for mh := range k.handlers {
		if mh.ctx.Err() == nil {
			return false
		}
	}
	return true
}

// attach gets the cache's new informer of k and registers k's handlers on it, resuming from
// k.pending. It must be called with m.mu held.
func (m *memberWatches) attach(ctx context.Context, k *watchedKind) {
	kind := fmt.Sprintf("%T", k.obj)
	informer, err := m.ref.cache.GetInformer(ctx, k.obj, cache.BlockUntilSynced(false))
	if err == nil {
		if shared, ok := informer.(toolscache.SharedIndexInformer); ok {
			k.informer = shared
		} else {
			err = fmt.Errorf("informer for %s is a %T, not a shared informer", kind, informer)
		}
	}
	if err != nil {
		m.log.Error(err, "Cannot restart the informer; retrying", "kind", kind)
		return
	}
	s := k.pending
	k.pending = nil
	if missing := missingIndexers(s.indexers, k.informer.GetIndexer().GetIndexers()); len(missing) > 0 {
		if err := k.informer.AddIndexers(missing); err != nil {
			m.log.Error(err, "Cannot copy the field indexes to the restarted informer", "kind", kind)
		}
	}
	for mh := range k.handlers {
		rh := &resumingHandler{ResourceEventHandler: mh.handler}
		rh.state.Store(s)
		reg, err := k.informer.AddEventHandlerWithOptions(rh, toolscache.HandlerOptions{})
		if err != nil {
			m.log.Error(err, "Cannot register a handler on the restarted informer", "kind", kind)
			continue
		}
		mh.reg = reg
		go rh.finish(ctx, reg, mh.removed, k.informer, s)
	}
}

func missingIndexers(want, have toolscache.Indexers) toolscache.Indexers {
	missing := toolscache.Indexers{}
	for name, fn := range want {
		if _, ok := have[name]; !ok {
			missing[name] = fn
		}
	}
	return missing
}

// resumeState is the last state of a restarted informer, which its handlers resume from.
type resumeState struct {
	objects  map[string]any // by key
	exact    bool           // objects is what the handlers were handed, nothing less
	indexers toolscache.Indexers
}

// resumingHandler is a handler registered on a restarted informer. Until its initial list has
// been handed over, it turns the list into the events a resumed watch would have brought.
type resumingHandler struct {
	toolscache.ResourceEventHandler
	state atomic.Pointer[resumeState]
}

func (h *resumingHandler) OnAdd(obj any, isInInitialList bool) {
	s := h.state.Load()
	if s == nil || !isInInitialList {
		h.ResourceEventHandler.OnAdd(obj, isInInitialList)
		return
	}
	key, err := toolscache.MetaNamespaceKeyFunc(obj)
	old, known := s.objects[key]
	switch {
	case err != nil || !known:
		// Created while the member's watch was down.
		h.ResourceEventHandler.OnAdd(obj, false)
	case s.exact && resourceVersion(old) == resourceVersion(obj) && resourceVersion(obj) != "":
		// Unchanged: the handler has seen it.
	default:
		h.OnUpdate(old, obj)
	}
}

// finish waits until the handler's initial list has been handed over, then hands it deletes
// for the objects that are gone, and forgets the old state.
func (h *resumingHandler) finish(ctx context.Context, reg toolscache.ResourceEventHandlerRegistration, removed <-chan struct{}, informer toolscache.SharedIndexInformer, s *resumeState) {
	defer h.state.Store(nil)
	select {
	case <-reg.HasSyncedChecker().Done():
	case <-removed:
		return
	case <-ctx.Done():
		return
	}
	store := informer.GetStore()
	for key, old := range s.objects {
		if _, exists, err := store.GetByKey(key); err == nil && !exists {
			h.OnDelete(toolscache.DeletedFinalStateUnknown{Key: key, Obj: old})
		}
	}
}

func resourceVersion(obj any) string {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return accessor.GetResourceVersion()
}
