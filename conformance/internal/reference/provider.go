// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package reference holds the conformance suite's reference provider: a small, correct provider
// over an in-memory Inventory of kubeconfigs, written without mcr's provider helpers so that
// it can be broken on purpose. Each Faults field turns one deliberate bug on; the self-test
// checks that every broken variant fails exactly the tests it should, which proves that every
// test can fail.
package reference

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/tools/clientcmd"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/kubeconfig"
	"mcr.dev/core/multicluster"
)

// Faults are deliberate bugs. The zero value is a correct provider.
type Faults struct {
	// StaticList reads the inventory once, at Start, and never again.
	StaticList bool
	// IgnorePreexisting skips members that exist at Start until their entry changes.
	IgnorePreexisting bool
	// CopyOnGet makes Get return a new wrapper around the engaged cluster on every call.
	CopyOnGet bool
	// ReconcileContext engages with a context that ends when the engaging "reconcile" returns.
	ReconcileContext bool
	// ReengageOnUpdate engages a new cluster instance on every write of an entry.
	ReengageOnUpdate bool
	// KeepOnDelete ignores deletions: deleted members stay engaged.
	KeepOnDelete bool
	// StaleGet keeps serving deleted or unready members from Get after disengaging them.
	StaleGet bool
	// NilBeforeStart makes Get return (nil, nil) before Start.
	NilBeforeStart bool
	// IndexOnlyExisting applies IndexField to the current clusters but not to later ones.
	IndexOnlyExisting bool
	// IndexOnlyFuture records IndexField for later clusters but does not apply it to current ones.
	IndexOnlyFuture bool
	// IndexTwice applies the indexes recorded before Start twice to every cluster it engages.
	IndexTwice bool
	// FleetWideList makes field-indexed Lists of every cluster return the matching objects of all
	// engaged clusters.
	FleetWideList bool
	// RenameOnRestart gives a member that an earlier provider instance engaged a new name.
	RenameOnRestart bool
	// TransientGetError makes Get fail with an error that is not ErrClusterNotFound while a
	// member is being engaged.
	TransientGetError bool
	// ContextsOutliveStop returns from Start without ending any engage context.
	ContextsOutliveStop bool
	// LeakyDisengage ends engage contexts on delete but never stops the clusters.
	LeakyDisengage bool
	// IgnoreReadiness engages unready members.
	IgnoreReadiness bool
	// NoReengageWhenReady never engages again a member that was disengaged for being unready.
	NoReengageWhenReady bool
	// IgnoreCredentialChange keeps the engaged cluster when a member's kubeconfig changes.
	IgnoreCredentialChange bool
	// RotationKeepsOld engages the new cluster after a credential change but leaves the old
	// engage context alive.
	RotationKeepsOld bool
	// NoRetry gives up on a member whose Engage failed.
	NoRetry bool
	// NoCancelOnEngageError retries a failed Engage but leaves its context alive.
	NoCancelOnEngageError bool
	// DoubleEngage engages a new member twice, with two cluster instances, one after the other.
	DoubleEngage bool
	// MaxClusters, when positive, caps how many members are engaged; the rest are ignored.
	MaxClusters int
	// SyncContext starts and engages each cluster with a context that has a timeout for its
	// cache sync and is canceled when the engaging function returns: the engage context dies
	// right after Engage, and the cluster stops (the bug behind conformance issue 14).
	SyncContext bool
	// StartReturnsEarly returns from Start at once, without engaging anything.
	StartReturnsEarly bool
	// NeverEngage runs Start until its context ends but never engages a member.
	NeverEngage bool
	// SerialAccessCheck checks the access to one member at a time, so that a member that does
	// not answer holds up every other (rule 9 of the provider contract).
	SerialAccessCheck bool
	// LogKubeconfig logs the member's kubeconfig, credentials and all, when engaging it fails.
	LogKubeconfig bool
	// ForgetOnSourceLoss takes a source of truth it cannot read for an empty one: every member
	// is disengaged during an outage and engaged again after it.
	ForgetOnSourceLoss bool
	// ReengageAfterSourceLoss engages every member again, with new clusters, once the source
	// of truth can be read again after an outage.
	ReengageAfterSourceLoss bool
	// ReengageOnResync engages every member again, with new clusters, on every periodic resync.
	ReengageOnResync bool
	// EngageBeforeIndexSync engages a cluster right after applying its indexes, without waiting
	// for the informers they start to sync (controller-runtime's IndexField does not wait).
	EngageBeforeIndexSync bool
	// GetKeepsFirst makes Get return the first cluster it returned for a name until the member
	// is disengaged: a rotation's new cluster is engaged, but Get still returns the old one.
	GetKeepsFirst bool
	// RotationBackoff re-engages a member for a credential change at most once an hour (a
	// guard against flapping): the first rotation works, the next one waits.
	RotationBackoff bool
	// StopOnResync stops a member's cluster on the stopOnResync-th resync after it was engaged
	// (an idle-client cleanup that ignores engagement) but keeps it engaged.
	StopOnResync bool
}

// stopOnResync is the resync on which StopOnResync stops a cluster.
const stopOnResync = 4

// retryDelay is how long the provider waits before retrying a failed engagement.
const retryDelay = 200 * time.Millisecond

// syncTimeout bounds the cache sync of a new cluster.
const syncTimeout = time.Minute

var (
	_ multicluster.Provider         = &Provider{}
	_ multicluster.ProviderRunnable = &Provider{}
)

// Provider engages every ready member of an Inventory, re-engages it when its kubeconfig
// changes and disengages it when it is deleted or becomes unready.
type Provider struct {
	// Log receives the provider's log lines; the zero value discards them.
	Log logr.Logger
	// ResyncPeriod, when positive, makes the provider read the whole inventory again that
	// often, as a periodic resync does.
	ResyncPeriod time.Duration

	inv    *Inventory
	faults Faults

	// kill ends everything the provider ever started, also what a fault lets outlive Start.
	kill     context.Context
	killFunc context.CancelFunc

	mu          sync.Mutex
	started     bool
	startCtx    context.Context
	aware       multicluster.Aware
	engaged     map[string]*engaged // by member name
	inflight    map[string]bool
	retryAt     map[string]time.Time
	gaveUp      map[string]int // member → entry generation given up on (NoRetry)
	wasUnready  map[string]bool
	preexisting map[string]int // member → generation at Start (IgnorePreexisting)
	kick        chan struct{}
	workers     sync.WaitGroup

	// indexMu orders IndexField against the indexing of new clusters, so that every cluster
	// gets every index exactly once.
	indexMu      sync.Mutex
	indexes      []index
	beforeStart  int // how many indexes were recorded before Start
	stale        map[string]*engaged
	engagingName map[string]bool
	// sourceLost is set while the inventory cannot be read.
	sourceLost bool
	// serial is held by an access check with SerialAccessCheck.
	serial sync.Mutex
	// gotten is what Get returned per name (GetKeepsFirst).
	gotten map[multicluster.ClusterName]cluster.Cluster
	// rotatedAt is when a member was last re-engaged for a credential change (RotationBackoff).
	rotatedAt map[string]time.Time
}

type index struct {
	obj   client.Object
	field string
	fn    client.IndexerFunc
}

// engaged is one engaged cluster instance.
type engaged struct {
	member     string
	name       multicluster.ClusterName
	cluster    cluster.Cluster
	kubeconfig []byte
	generation int
	ctx        context.Context
	cancel     context.CancelFunc // ends the engage context
	stop       context.CancelFunc // stops the cluster
	done       chan struct{}      // closed when the cluster's Start returned
	resyncs    int                // resyncs seen while engaged (StopOnResync)
}

// New returns a provider over inv with the given faults (none for a correct provider).
func New(inv *Inventory, faults Faults) *Provider {
	kill, killFunc := context.WithCancel(context.Background())
	return &Provider{
		inv: inv, faults: faults, kill: kill, killFunc: killFunc,
		engaged: map[string]*engaged{}, inflight: map[string]bool{}, retryAt: map[string]time.Time{},
		gaveUp: map[string]int{}, wasUnready: map[string]bool{}, stale: map[string]*engaged{},
		engagingName: map[string]bool{}, kick: make(chan struct{}, 1),
		gotten: map[multicluster.ClusterName]cluster.Cluster{}, rotatedAt: map[string]time.Time{},
	}
}

// Close stops everything the provider started, also what a fault left running. The self-test
// harness calls it once a test is over.
func (p *Provider) Close() { p.killFunc() }

// Start engages the inventory's members with aware until ctx ends.
func (p *Provider) Start(ctx context.Context, aware multicluster.Aware) error {
	p.mu.Lock()
	if p.started {
		p.mu.Unlock()
		return errors.New("reference provider: Start called twice")
	}
	p.started, p.startCtx, p.aware = true, ctx, aware
	if p.faults.IgnorePreexisting {
		p.preexisting = map[string]int{}
		for name, e := range p.inv.Snapshot() {
			p.preexisting[name] = e.Generation
		}
	}
	p.mu.Unlock()
	p.indexMu.Lock()
	p.beforeStart = len(p.indexes)
	p.indexMu.Unlock()
	if p.faults.StartReturnsEarly {
		return nil
	}
	if p.faults.NeverEngage {
		<-ctx.Done()
		return nil
	}

	changes, unsubscribe := p.inv.Subscribe()
	defer unsubscribe()
	var resync <-chan time.Time
	if p.ResyncPeriod > 0 {
		t := time.NewTicker(p.ResyncPeriod)
		defer t.Stop()
		resync = t.C
	}
	p.reconcile()
	for {
		select {
		case <-resync:
			p.resync()
		case <-ctx.Done():
			if p.faults.ContextsOutliveStop {
				return nil
			}
			p.mu.Lock()
			for name := range p.engaged {
				p.disengageLocked(name)
			}
			p.mu.Unlock()
			p.workers.Wait()
			return nil
		case <-changes:
			if !p.faults.StaticList {
				p.reconcile()
			}
		case <-p.kick:
			p.reconcile()
		}
	}
}

func (p *Provider) kickLater(d time.Duration) {
	time.AfterFunc(d, func() {
		select {
		case p.kick <- struct{}{}:
		default:
		}
	})
}

// clusterName is the name a member is engaged under.
func (p *Provider) clusterName(member string) multicluster.ClusterName {
	if p.faults.RenameOnRestart {
		if n := p.inv.engagedByOthers(member, p); n > 0 {
			return multicluster.ClusterName(fmt.Sprintf("%s-r%d", member, n))
		}
	}
	return multicluster.ClusterName(member)
}

// resync reads the whole inventory again, as a periodic resync does.
func (p *Provider) resync() {
	if p.faults.StopOnResync {
		p.mu.Lock()
		for _, e := range p.engaged {
			if e.resyncs++; e.resyncs == stopOnResync {
				e.stop()
			}
		}
		p.mu.Unlock()
	}
	p.reconcileWith(p.faults.ReengageOnResync)
}

// reconcile brings the engaged clusters in line with the inventory.
func (p *Provider) reconcile() { p.reconcileWith(false) }

// reconcileWith reconciles; force engages every member again with a new cluster.
func (p *Provider) reconcileWith(force bool) {
	desired, err := p.inv.Read()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.startCtx.Err() != nil {
		return
	}
	if err != nil {
		p.Log.Error(err, "Reading the inventory; retrying")
		p.kickLater(retryDelay)
		if !p.faults.ForgetOnSourceLoss {
			p.sourceLost = true
			return
		}
		desired = map[string]Entry{}
	}
	if p.sourceLost {
		p.sourceLost = false
		force = force || p.faults.ReengageAfterSourceLoss
	}
	for _, member := range slices.Sorted(maps.Keys(desired)) {
		e := desired[member]
		cur := p.engaged[member]
		if !e.Ready && !p.faults.IgnoreReadiness {
			if cur != nil {
				p.wasUnready[member] = true
			}
			continue
		}
		if p.faults.NoReengageWhenReady && p.wasUnready[member] {
			continue
		}
		if gen, ok := p.preexisting[member]; ok && gen == e.Generation {
			continue
		}
		if gen, ok := p.gaveUp[member]; ok && gen == e.Generation {
			continue
		}
		if cur != nil {
			switch {
			case force:
			case p.faults.ReengageOnUpdate && cur.generation != e.Generation:
			case bytes.Equal(cur.kubeconfig, e.Kubeconfig), p.faults.IgnoreCredentialChange:
				continue
			}
		}
		if p.inflight[member] || time.Now().Before(p.retryAt[member]) {
			continue
		}
		if p.faults.RotationBackoff && cur != nil && !bytes.Equal(cur.kubeconfig, e.Kubeconfig) {
			if at, ok := p.rotatedAt[member]; ok && time.Since(at) < time.Hour {
				continue
			}
			p.rotatedAt[member] = time.Now()
		}
		if p.faults.MaxClusters > 0 && cur == nil && len(p.engaged)+len(p.inflight) >= p.faults.MaxClusters {
			continue
		}
		p.inflight[member] = true
		p.workers.Add(1)
		go p.engage(member, e)
	}
	for member := range p.engaged {
		e, ok := desired[member]
		if p.faults.KeepOnDelete && !ok {
			continue
		}
		if !ok || (!e.Ready && !p.faults.IgnoreReadiness) {
			p.disengageLocked(member)
		}
	}
}

// disengageLocked ends the member's engagement and stops its cluster.
func (p *Provider) disengageLocked(member string) {
	cur := p.engaged[member]
	if cur == nil {
		return
	}
	delete(p.engaged, member)
	delete(p.gotten, cur.name)
	if p.faults.StaleGet {
		p.stale[member] = cur
	}
	cur.cancel()
	if !p.faults.LeakyDisengage {
		cur.stop()
	}
}

// engage creates, starts, indexes and engages a cluster for member. It runs in its own
// goroutine and asks for another reconcile when done, so that changes made meanwhile apply.
func (p *Provider) engage(member string, entry Entry) {
	defer p.workers.Done()
	err := p.engageOnce(member, entry)
	switch {
	case err == nil:
		p.Log.Info("Engaged member", "cluster", member)
	case p.faults.LogKubeconfig:
		p.Log.Error(err, "Engaging member failed; retrying", "cluster", member, "kubeconfig", string(entry.Kubeconfig))
	default:
		p.Log.Error(err, "Engaging member failed; retrying", "cluster", member)
	}
	p.mu.Lock()
	delete(p.inflight, member)
	if err != nil {
		if p.faults.NoRetry {
			p.gaveUp[member] = entry.Generation
		} else {
			p.retryAt[member] = time.Now().Add(retryDelay)
			p.kickLater(retryDelay)
		}
	}
	p.mu.Unlock()
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

func (p *Provider) engageOnce(member string, entry Entry) error {
	p.mu.Lock()
	startCtx, aware := p.startCtx, p.aware
	name := p.clusterName(member)
	p.engagingName[member] = true
	old := p.engaged[member]
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.engagingName, member)
		p.mu.Unlock()
	}()

	count := 1
	if p.faults.DoubleEngage && old == nil {
		count = 2
	}
	if p.faults.SyncContext {
		// The bug: one context for the sync and everything after it, ended on return.
		syncCtx, cancelSync := context.WithTimeout(startCtx, syncTimeout)
		defer cancelSync()
		startCtx = syncCtx
	}
	var prepared []*engaged
	abort := func(err error) error {
		for _, e := range prepared {
			e.cancel()
			e.stop()
			<-e.done
		}
		return fmt.Errorf("member %q: %w", member, err)
	}
	for range count {
		e, err := p.prepare(startCtx, member, name, entry)
		if err != nil {
			return abort(err)
		}
		prepared = append(prepared, e)
	}

	// Index and publish under indexMu, so that IndexField either sees the cluster or has
	// recorded its index before the cluster is indexed.
	p.indexMu.Lock()
	pending := slices.Clone(p.indexes)
	if p.faults.IndexOnlyExisting {
		pending = nil
	}
	if p.faults.IndexTwice {
		pending = append(pending, p.indexes[:p.beforeStart]...)
	}
	for _, e := range prepared {
		for _, idx := range pending {
			if err := e.cluster.GetFieldIndexer().IndexField(e.ctx, idx.obj, idx.field, idx.fn); err != nil {
				p.indexMu.Unlock()
				return abort(fmt.Errorf("indexing %q: %w", idx.field, err))
			}
		}
		// Applying an index starts the informer of its kind without waiting for it: wait
		// again, so that the cluster is engaged with a synced cache (rule 3).
		if len(pending) > 0 && !p.faults.EngageBeforeIndexSync {
			if err := waitForSync(e.ctx, e.cluster); err != nil {
				p.indexMu.Unlock()
				return abort(err)
			}
		}
	}
	p.mu.Lock()
	p.engaged[member] = prepared[0]
	delete(p.stale, member)
	p.mu.Unlock()
	p.indexMu.Unlock()

	for i, e := range prepared {
		if i > 0 {
			// DoubleEngage: replace the instance just engaged by another one at once.
			p.mu.Lock()
			p.engaged[member] = e
			p.mu.Unlock()
		}
		if err := p.engageWith(aware, e); err != nil {
			p.mu.Lock()
			if p.engaged[member] == e {
				if old != nil {
					p.engaged[member] = old
				} else {
					delete(p.engaged, member)
				}
			}
			p.mu.Unlock()
			return abort(fmt.Errorf("engaging: %w", err))
		}
		if i > 0 {
			prev := prepared[i-1]
			prev.cancel()
			prev.stop()
		}
	}
	if old != nil && !p.faults.RotationKeepsOld {
		old.cancel()
		old.stop()
	}
	p.inv.recordEngaged(member, p)
	return nil
}

// engageWith engages e with aware, with the context the faults call for.
func (p *Provider) engageWith(aware multicluster.Aware, e *engaged) error {
	ctx := e.ctx
	if p.faults.ReconcileContext {
		// The bug: a context that belongs to this "reconcile" and ends with it.
		reconcileCtx, endReconcile := context.WithCancel(e.ctx)
		defer endReconcile()
		ctx = reconcileCtx
	}
	err := aware.Engage(ctx, e.name, e.cluster)
	if err != nil && p.faults.NoCancelOnEngageError {
		// The bug: the caller's cleanup will not end the context the Aware saw.
		e.cancel = func() {}
	}
	return err
}

// prepare creates a cluster for member, starts it and waits for its cache to sync.
func (p *Provider) prepare(startCtx context.Context, member string, name multicluster.ClusterName, entry Entry) (*engaged, error) {
	cfg, err := clientcmd.RESTConfigFromKubeConfig(entry.Kubeconfig)
	if err != nil {
		return nil, err
	}
	// A URL with credentials must not reach client-go or net/http, whose errors quote it.
	if err := kubeconfig.CheckServerURL("the kubeconfig's server", cfg.Host); err != nil {
		return nil, err
	}
	var cl cluster.Cluster
	cl, err = cluster.New(cfg)
	if err != nil {
		return nil, err
	}
	if err := p.checkAccess(startCtx, cfg.Host, cl.GetHTTPClient()); err != nil {
		return nil, err
	}
	if p.faults.FleetWideList {
		cl = &fleetWideCluster{Cluster: cl, p: p}
	}

	// The cluster runs until disengaged; with some faults only Close stops it.
	clusterParent := startCtx
	if p.faults.LeakyDisengage || p.faults.ContextsOutliveStop {
		clusterParent = p.kill
	}
	clusterCtx, stop := context.WithCancel(clusterParent)
	context.AfterFunc(p.kill, stop)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = cl.Start(clusterCtx)
		if hc := cl.GetHTTPClient(); hc != nil {
			hc.CloseIdleConnections()
		}
	}()
	if err := waitForSync(clusterCtx, cl); err != nil {
		stop()
		<-done
		return nil, err
	}

	engageParent := startCtx
	if p.faults.ContextsOutliveStop {
		engageParent = p.kill
	}
	engageCtx, cancel := context.WithCancel(engageParent)
	return &engaged{member: member, name: name, cluster: cl, kubeconfig: entry.Kubeconfig, generation: entry.Generation,
		ctx: engageCtx, cancel: cancel, stop: stop, done: done}, nil
}

// waitForSync waits, at most syncTimeout, until the cache of cl has synced.
func waitForSync(ctx context.Context, cl cluster.Cluster) error {
	ctx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	if !cl.GetCache().WaitForCacheSync(ctx) {
		return errors.New("cache did not sync")
	}
	return nil
}

// checkAccess asks the member's apiserver for its version, as providers check that a member
// answers before they engage it; a member that does not answer fails after syncTimeout.
func (p *Provider) checkAccess(ctx context.Context, host string, hc *http.Client) error {
	if p.faults.SerialAccessCheck {
		p.serial.Lock()
		defer p.serial.Unlock()
	}
	ctx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(host, "/")+"/version", nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("checking access: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("checking access: GET /version: %s", resp.Status)
	}
	return nil
}

// Get returns the engaged cluster of name.
func (p *Provider) Get(_ context.Context, name multicluster.ClusterName) (cluster.Cluster, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.started && p.faults.NilBeforeStart {
		return nil, nil
	}
	if first, ok := p.gotten[name]; ok {
		return first, nil
	}
	for _, e := range p.engaged {
		if e.name == name && e.ctx.Err() == nil {
			if p.faults.GetKeepsFirst {
				p.gotten[name] = e.cluster
			}
			if p.faults.CopyOnGet {
				return &copiedCluster{Cluster: e.cluster}, nil
			}
			return e.cluster, nil
		}
	}
	for _, e := range p.stale {
		if e.name == name {
			return e.cluster, nil
		}
	}
	if p.faults.TransientGetError && p.engagingName[string(name)] {
		return nil, fmt.Errorf("cluster %q is being engaged, try again", name)
	}
	return nil, fmt.Errorf("cluster %q: %w", name, multicluster.ErrClusterNotFound)
}

// IndexField records the index for future clusters and applies it to the engaged ones.
func (p *Provider) IndexField(ctx context.Context, obj client.Object, field string, fn client.IndexerFunc) error {
	p.indexMu.Lock()
	defer p.indexMu.Unlock()
	if !p.faults.IndexOnlyExisting {
		p.indexes = append(p.indexes, index{obj: obj, field: field, fn: fn})
	}
	if p.faults.IndexOnlyFuture {
		return nil
	}
	p.mu.Lock()
	targets := slices.Collect(maps.Values(p.engaged))
	p.mu.Unlock()
	var errs []error
	for _, e := range targets {
		if err := e.cluster.GetFieldIndexer().IndexField(ctx, obj, field, fn); err != nil && e.ctx.Err() == nil {
			errs = append(errs, fmt.Errorf("cluster %q: %w", e.name, err))
		}
	}
	return errors.Join(errs...)
}

// copiedCluster is what CopyOnGet returns: the same cluster behind a new pointer.
type copiedCluster struct{ cluster.Cluster }
