// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package multi

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/go-logr/logr"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"mcr.dev/core/clusters"
	"mcr.dev/core/multicluster"
)

var (
	_ multicluster.Provider         = &Provider{}
	_ multicluster.ProviderRunnable = &Provider{}
	_ clusters.DefaultsReceiver     = &Provider{}
	_ multicluster.StatusReporter   = &Provider{}
)

// DefaultSeparator is the default of Options.Separator.
const DefaultSeparator = "#"

// Options configures a Provider. The zero value of every field selects its default.
type Options struct {
	// Separator joins a member's prefix and the names of its clusters. Prefixes must not contain
	// it; cluster names may.
	//
	// Defaults to DefaultSeparator ("#").
	Separator string

	// Logger receives lifecycle messages, with the member under the key "provider" and
	// clusters under "cluster".
	//
	// Defaults to Log, else to controller-runtime's logger named "multi-provider".
	Logger logr.Logger

	// Log is the former name of Logger, used when Logger is unset.
	//
	// Deprecated: use Logger.
	Log logr.Logger
}

// Provider serves the clusters of several member providers under name prefixes. Create it with
// New.
type Provider struct {
	sep string
	log logr.Logger

	mu        sync.Mutex
	members   map[string]*member
	indexes   []clusters.Index
	indexKeys map[string]struct{}
	startCtx  context.Context // nil until Start
	aware     multicluster.Aware
	// defaults are the manager's cluster defaults, handed to every member provider that takes
	// them; nil until SetClusterDefaults.
	defaults *clusters.Defaults
}

// member is one added provider.
type member struct {
	prefix   string
	provider multicluster.Provider

	// ready means the member has every recorded index, so IndexField reaches it directly.
	ready bool
	// started is set once the member has (or would have, if not runnable) been started.
	started bool
	ctx     context.Context
	cancel  context.CancelFunc
	done    chan struct{} // closed when the member's Start returned; valid once started
}

// New returns a Provider without members. Options are defaulted here.
func New(opts Options) *Provider {
	if opts.Separator == "" {
		opts.Separator = DefaultSeparator
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = opts.Log
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = ctrllog.Log.WithName("multi-provider")
	}
	return &Provider{
		sep:       opts.Separator,
		log:       opts.Logger,
		members:   map[string]*member{},
		indexKeys: map[string]struct{}{},
	}
}

// AddProvider adds p under prefix. Every index recorded by IndexField is applied to p first; if
// that fails, p is not added. If multi is running and p is a ProviderRunnable, p is started.
func (m *Provider) AddProvider(prefix string, p multicluster.Provider) error {
	if prefix == "" || strings.Contains(prefix, m.sep) {
		return fmt.Errorf("multi provider: prefix %q must be non-empty and must not contain the separator %q", prefix, m.sep)
	}
	m.mu.Lock()
	if m.startCtx != nil && m.startCtx.Err() != nil {
		m.mu.Unlock()
		return fmt.Errorf("multi provider: adding provider %q: the multi provider has stopped", prefix)
	}
	if _, exists := m.members[prefix]; exists {
		m.mu.Unlock()
		return fmt.Errorf("multi provider: a provider with prefix %q already exists", prefix)
	}
	mem := &member{prefix: prefix, provider: p, done: make(chan struct{})}
	m.members[prefix] = mem
	defaults := m.defaults
	m.mu.Unlock()
	if defaults != nil {
		m.handDefaults(prefix, p, *defaults)
	}

	// Catch up on recorded indexes until none is pending, then mark the member ready in the
	// same critical section, so each index reaches it exactly once.
	for applied := 0; ; {
		m.mu.Lock()
		if m.members[prefix] != mem {
			m.mu.Unlock()
			return fmt.Errorf("multi provider: provider %q was removed while being added", prefix)
		}
		pending := slices.Clone(m.indexes[applied:])
		if len(pending) == 0 {
			mem.ready = true
			startNow := m.startCtx != nil
			if startNow {
				m.startLocked(mem)
			}
			m.mu.Unlock()
			m.log.Info("Added provider", "provider", prefix, "started", startNow)
			return nil
		}
		m.mu.Unlock()
		for _, idx := range pending {
			if err := p.IndexField(context.Background(), idx.Object, idx.Field, idx.Extractor); err != nil {
				m.mu.Lock()
				if m.members[prefix] == mem {
					delete(m.members, prefix)
				}
				m.mu.Unlock()
				return fmt.Errorf("multi provider: adding provider %q: applying index on field %q: %w", prefix, idx.Field, err)
			}
		}
		applied += len(pending)
	}
}

// SetClusterDefaults hands the manager's cluster defaults (mcr.dev/core/manager.WithClusterDefaults)
// to every member provider that takes them (clusters.DefaultsReceiver), now and when added
// later; a member provider that does not is logged once and keeps its own options.
func (m *Provider) SetClusterDefaults(d clusters.Defaults) {
	m.mu.Lock()
	m.defaults = &d
	members := slices.Collect(maps.Values(m.members))
	m.mu.Unlock()
	for _, mem := range members {
		m.handDefaults(mem.prefix, mem.provider, d)
	}
}

func (m *Provider) handDefaults(prefix string, p multicluster.Provider, d clusters.Defaults) {
	receiver, ok := p.(clusters.DefaultsReceiver)
	if !ok {
		m.log.Info("The provider does not take the manager's cluster defaults: its members use the provider's own options",
			"provider", prefix, "type", fmt.Sprintf("%T", p))
		return
	}
	receiver.SetClusterDefaults(d)
}

// startLocked starts mem under multi's context; m.mu must be held and Start must have run.
func (m *Provider) startLocked(mem *member) {
	mem.ctx, mem.cancel = context.WithCancel(m.startCtx)
	mem.started = true
	runnable, ok := mem.provider.(multicluster.ProviderRunnable)
	if !ok {
		close(mem.done)
		return
	}
	aware := &prefixAware{member: mem, sep: m.sep, aware: m.aware}
	go func() {
		defer close(mem.done)
		if err := runnable.Start(mem.ctx, aware); err != nil && mem.ctx.Err() == nil {
			m.log.Error(err, "Provider stopped with an error; its clusters are disengaged", "provider", mem.prefix)
		}
		// Whatever the member left engaged ends with it.
		mem.cancel()
	}()
}

// RemoveProvider removes the member with that prefix: it stops the member, disengages every
// cluster the member engaged, and returns once the member's Start has returned. Removing an
// unknown prefix does nothing.
func (m *Provider) RemoveProvider(prefix string) {
	m.mu.Lock()
	mem, ok := m.members[prefix]
	delete(m.members, prefix)
	m.mu.Unlock()
	if !ok || !mem.started {
		return
	}
	mem.cancel()
	<-mem.done
	m.log.Info("Removed provider", "provider", prefix)
}

// ProviderNames returns the prefixes of the members, sorted.
func (m *Provider) ProviderNames() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Sorted(maps.Keys(m.members))
}

// GetProvider returns the member with that prefix.
func (m *Provider) GetProvider(prefix string) (multicluster.Provider, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	mem, ok := m.members[prefix]
	if !ok {
		return nil, false
	}
	return mem.provider, true
}

// Start starts every member that is a ProviderRunnable and blocks until ctx ends; it returns
// once every member's Start has returned. Start may be called only once.
func (m *Provider) Start(ctx context.Context, aware multicluster.Aware) error {
	m.mu.Lock()
	if m.startCtx != nil {
		m.mu.Unlock()
		return errors.New("multi provider: Start called twice")
	}
	m.startCtx, m.aware = ctx, aware
	for _, mem := range m.members {
		if mem.ready { // members still catching up on indexes start themselves
			m.startLocked(mem)
		}
	}
	m.mu.Unlock()

	<-ctx.Done()

	m.mu.Lock()
	var running []*member
	for _, mem := range m.members {
		if mem.started {
			running = append(running, mem)
		}
	}
	m.mu.Unlock()
	for _, mem := range running {
		<-mem.done
	}
	return nil
}

// FleetStatus merges the status of the members that report one (multicluster.StatusReporter, as
// every provider built on mcr.dev/core/providers/kit does): listed once each of them has synced
// its first list, so a member added while multi runs makes the fleet unlisted until it has;
// failing members under their prefixed names. Members that report no status count as listed.
func (m *Provider) FleetStatus() multicluster.FleetStatus {
	m.mu.Lock()
	members := slices.Collect(maps.Values(m.members))
	m.mu.Unlock()
	status := multicluster.FleetStatus{Listed: true}
	for _, mem := range members {
		reporter, ok := statusReporter(mem.provider)
		if !ok {
			continue
		}
		st := reporter.FleetStatus()
		status.Listed = status.Listed && st.Listed
		for name, problem := range st.Failing {
			if status.Failing == nil {
				status.Failing = map[multicluster.ClusterName]string{}
			}
			status.Failing[multicluster.ClusterName(mem.prefix+m.sep+string(name))] = problem
		}
	}
	return status
}

// statusReporter returns the status reporter of a member, looking through AsRunnable.
func statusReporter(p multicluster.Provider) (multicluster.StatusReporter, bool) {
	if r, ok := p.(*setupRunnable); ok {
		p = r.Provider
	}
	reporter, ok := p.(multicluster.StatusReporter)
	return reporter, ok
}

// Get returns the cluster "<prefix><separator><name>" from the member with that prefix, or an
// error wrapping multicluster.ErrClusterNotFound.
func (m *Provider) Get(ctx context.Context, name multicluster.ClusterName) (cluster.Cluster, error) {
	prefix, inner, ok := strings.Cut(string(name), m.sep)
	if !ok {
		return nil, fmt.Errorf("cluster %q: no provider prefix: %w", name, multicluster.ErrClusterNotFound)
	}
	m.mu.Lock()
	mem, ok := m.members[prefix]
	m.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("cluster %q: no provider %q: %w", name, prefix, multicluster.ErrClusterNotFound)
	}
	cl, err := mem.provider.Get(ctx, multicluster.ClusterName(inner))
	if err != nil {
		return nil, fmt.Errorf("provider %q: %w", prefix, err)
	}
	return cl, nil
}

// IndexField records the index and applies it to every member, present and future, each
// exactly once. Indexing the same object type and field again is a no-op. Errors of individual
// members are joined, each naming its member.
func (m *Provider) IndexField(ctx context.Context, obj client.Object, field string, extractValue client.IndexerFunc) error {
	idx := clusters.Index{Object: obj, Field: field, Extractor: extractValue}
	m.mu.Lock()
	key := idx.Key()
	if _, dup := m.indexKeys[key]; dup {
		m.mu.Unlock()
		return nil
	}
	m.indexKeys[key] = struct{}{}
	m.indexes = append(m.indexes, idx)
	var targets []*member
	for _, mem := range m.members {
		if mem.ready {
			targets = append(targets, mem)
		}
	}
	m.mu.Unlock()
	slices.SortFunc(targets, func(a, b *member) int { return strings.Compare(a.prefix, b.prefix) })

	var errs []error
	for _, mem := range targets {
		if err := mem.provider.IndexField(ctx, obj, field, extractValue); err != nil {
			errs = append(errs, fmt.Errorf("provider %q: %w", mem.prefix, err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("indexing field %q: %w", field, errors.Join(errs...))
	}
	return nil
}

// prefixAware is the Aware a member engages through: it prefixes names and ties each
// engagement to the member, so removing the member disengages its clusters even when the member
// engaged them with a context of its own.
type prefixAware struct {
	member *member
	sep    string
	aware  multicluster.Aware
}

func (a *prefixAware) Engage(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster) error {
	if a.member.ctx.Err() != nil {
		return fmt.Errorf("provider %q was removed", a.member.prefix)
	}
	engageCtx, cancel := context.WithCancel(ctx)
	// Both callbacks run at most once and start no goroutine until they fire.
	stopWatchingMember := context.AfterFunc(a.member.ctx, cancel)
	context.AfterFunc(engageCtx, func() { stopWatchingMember() })
	full := multicluster.ClusterName(a.member.prefix + a.sep + string(name))
	if err := a.aware.Engage(engageCtx, full, cl); err != nil {
		cancel()
		return err
	}
	return nil
}
