package kind

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/cluster"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	kindcluster "sigs.k8s.io/kind/pkg/cluster"

	"mcr.dev/core/clusters"
	"mcr.dev/core/kubeconfig"
	"mcr.dev/core/multicluster"
)

var (
	_ multicluster.Provider         = &Provider{}
	_ multicluster.ProviderRunnable = &Provider{}
)

// Defaults of Options.
const (
	DefaultPollInterval   = 5 * time.Second
	DefaultCommandTimeout = 30 * time.Second
)

// concurrentReads bounds the kubeconfig reads that run at once; each runs about eight
// container engine commands.
const concurrentReads = 4

// Options configures a Provider. The zero value of every field selects its default.
type Options struct {
	// Prefix selects the kind clusters to engage: only those whose name starts with it. The
	// prefix stays part of the cluster name.
	//
	// Defaults to "": every kind cluster.
	Prefix string

	// PollInterval is how often the provider lists the kind clusters and reads their
	// kubeconfigs, to notice clusters created, deleted, and deleted and created again.
	//
	// Defaults to DefaultPollInterval (5s).
	PollInterval time.Duration

	// KindOptions configure the kind library's provider (sigs.k8s.io/kind/pkg/cluster), for
	// example kindcluster.ProviderWithPodman() to choose the container engine.
	//
	// Defaults to what the kind command line does: the engine named by
	// $KIND_EXPERIMENTAL_PROVIDER (docker, podman, nerdctl, finch, nerdctl.lima) when set, else
	// auto-detection (docker, then nerdctl, then podman, falling back to docker).
	KindOptions []kindcluster.ProviderOption

	// Internal selects the kubeconfig for use inside the kind network (the server is the
	// control-plane container's name and port 6443) instead of the one for the host (the server
	// is the port kind published on the host). Set it when the controller runs in a container
	// attached to the "kind" network, for example in a pod of another kind cluster.
	//
	// Defaults to false: the host kubeconfig, as `kind get kubeconfig` prints it.
	Internal bool

	// Policy says which kubeconfig features are accepted. kind generates kubeconfigs with inline
	// credentials only, which the zero Policy (the hardened policy of mcr.dev/core/kubeconfig)
	// accepts; anything else in a kind kubeconfig was not written by kind and is refused.
	//
	// Defaults to the zero Policy: no exec or auth-provider plugins, no references to local
	// files, no insecure-skip-tls-verify.
	Policy kubeconfig.Policy

	// RESTOptions change each cluster's rest.Config after it is loaded (QPS, Burst, a user
	// agent, ...), before the cluster is created.
	//
	// Defaults to none.
	RESTOptions []func(*rest.Config) error

	// ClusterOptions are passed to cluster.New for every cluster (scheme, cache options, ...).
	//
	// Defaults to none.
	ClusterOptions []cluster.Option

	// CacheSyncTimeout bounds how long a new cluster's API server may take to answer the
	// readiness check (an authenticated GET /api), and then its cache to sync, before the
	// cluster is given up on until the next poll. An unreachable cluster never delays others.
	//
	// Defaults to clusters.DefaultCacheSyncTimeout (one minute).
	CacheSyncTimeout time.Duration

	// CommandTimeout bounds how long the provider waits for one call into the kind library
	// (listing clusters, reading one cluster's kubeconfig, detecting the container engine), each
	// of which runs container engine commands. A call that takes longer is reported as an error
	// for that cluster (or, for the list, for that poll) and left to finish in the background.
	//
	// Defaults to DefaultCommandTimeout (30s).
	CommandTimeout time.Duration

	// Log receives the provider's messages, with the cluster under the key "cluster".
	// Credentials are never logged.
	//
	// Defaults to controller-runtime's logger named "kind-provider".
	Log logr.Logger
}

// withDefaults is the only place defaults are applied.
func (o Options) withDefaults() Options {
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	if len(o.KindOptions) == 0 {
		if opt := runtimeFromEnv(); opt != nil {
			o.KindOptions = []kindcluster.ProviderOption{opt}
		}
	}
	if o.CacheSyncTimeout <= 0 {
		o.CacheSyncTimeout = clusters.DefaultCacheSyncTimeout
	}
	if o.CommandTimeout <= 0 {
		o.CommandTimeout = DefaultCommandTimeout
	}
	if o.Log.GetSink() == nil {
		o.Log = ctrllog.Log.WithName("kind-provider")
	}
	return o
}

// Provider engages the clusters of the local kind installation. Create it with New; a
// multi-cluster manager runs it (Start). Get and IndexField come from the embedded
// clusters.Clusters.
type Provider struct {
	clusters.Clusters[cluster.Cluster]

	opts Options
	log  logr.Logger
	kind *kindCalls

	started atomic.Bool
	workers sync.WaitGroup

	mu       sync.Mutex
	members  map[multicluster.ClusterName]*member
	listErr  string // last logged list error
	stopping bool   // Start is returning: no new workers
}

// member is one kind cluster from the poll that first lists it until it is disengaged for good.
type member struct {
	listed bool   // in the latest list
	hash   string // content hash of the engaged kubeconfig; "" when none is engaged
	busy   bool   // a worker is bringing the engaged state to the listed one
	again  bool   // a poll came while the worker was busy: look once more
	err    string // last logged problem, so that each is logged once
}

// New returns a provider for opts.
func New(opts Options) *Provider {
	o := opts.withDefaults()
	p := &Provider{
		opts:    o,
		log:     o.Log,
		kind:    newKindCalls(o.KindOptions, o.CommandTimeout, concurrentReads),
		members: map[multicluster.ClusterName]*member{},
	}
	p.Options = clusters.Options[cluster.Cluster]{
		CacheSyncTimeout: o.CacheSyncTimeout,
		// The provider decides from the kubeconfig's content, before creating a cluster, whether
		// a kind cluster changed; AddOrReplace is only called for changes, so it must replace.
		EqualClusters: func(a, b cluster.Cluster) bool { return a == b },
		Log:           o.Log.V(1),
	}
	return p
}

// Start engages the kind clusters with aware and keeps the fleet in step with them until ctx
// ends; then it disengages every cluster and returns nil. A manager calls it. Problems with the
// container engine or with single clusters are logged and retried at the next poll; they never
// make Start fail.
func (p *Provider) Start(ctx context.Context, aware multicluster.Aware) error {
	if !p.started.CompareAndSwap(false, true) {
		return errors.New("kind provider: Start called twice")
	}
	defer func() {
		p.mu.Lock()
		p.stopping = true
		p.mu.Unlock()
		// Workers return promptly once ctx is done: every wait they do ends with it.
		p.workers.Wait()
		p.RemoveAll()
		if !p.kind.wait(p.opts.CommandTimeout) {
			p.log.Info("Container engine commands still running after stop; leaving them to finish", "waited", p.opts.CommandTimeout.String())
		}
	}()

	ticker := time.NewTicker(p.opts.PollInterval)
	defer ticker.Stop()
	for {
		p.poll(ctx, aware)
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// poll lists the kind clusters and hands every selected one, and every one that is gone, to its
// worker.
func (p *Provider) poll(ctx context.Context, aware multicluster.Aware) {
	names, err := p.kind.list(ctx)
	if ctx.Err() != nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		// Keep every cluster as it is: a failed list says nothing about the clusters.
		if msg := err.Error(); msg != p.listErr {
			p.listErr = msg
			p.log.Error(err, "Cannot list kind clusters; keeping the engaged ones and trying again", "retryIn", p.opts.PollInterval.String())
		}
		return
	}
	if p.listErr != "" {
		p.listErr = ""
		p.log.Info("Listing kind clusters works again")
	}

	listed := map[multicluster.ClusterName]bool{}
	for _, name := range names {
		if strings.HasPrefix(name, p.opts.Prefix) {
			listed[multicluster.ClusterName(name)] = true
		}
	}
	for name := range listed {
		if _, ok := p.members[name]; !ok {
			p.members[name] = &member{}
		}
	}
	for name, m := range p.members {
		if m.busy && m.listed && !listed[name] && !p.stopping {
			// The worker may be waiting for the cache of a cluster that is gone to sync:
			// Remove aborts that, and the worker then sees that the cluster is gone.
			p.workers.Add(1)
			go func() {
				defer p.workers.Done()
				p.Remove(name)
			}()
		}
		m.listed = listed[name]
		p.kickLocked(ctx, aware, name, m)
	}
}

// kickLocked starts a worker for m, or asks its running worker to look again.
func (p *Provider) kickLocked(ctx context.Context, aware multicluster.Aware, name multicluster.ClusterName, m *member) {
	if m.busy {
		m.again = true
		return
	}
	if p.stopping || ctx.Err() != nil {
		return
	}
	m.busy = true
	p.workers.Add(1)
	go p.work(ctx, aware, name, m)
}

// work brings one kind cluster's engagement in line with what the last poll saw: it reads the
// kubeconfig of a listed cluster and engages or re-engages it when the content changed (or it
// is not engaged), and disengages a cluster that is no longer listed.
func (p *Provider) work(ctx context.Context, aware multicluster.Aware, name multicluster.ClusterName, m *member) {
	defer p.workers.Done()
	log := p.log.WithValues("cluster", name)
	for {
		p.mu.Lock()
		if ctx.Err() != nil {
			m.busy = false
			p.mu.Unlock()
			return
		}
		if !m.listed {
			engaged := m.hash != ""
			m.hash = ""
			p.mu.Unlock()
			// Remove also covers an instance that stopped on its own and was forgotten. The
			// member stays busy meanwhile, so a poll that lists the name again finds it.
			p.Remove(name)
			if engaged {
				log.Info("Disengaged cluster: the kind cluster is gone")
			}
			p.mu.Lock()
			if m.listed { // created again meanwhile
				p.mu.Unlock()
				continue
			}
			delete(p.members, name)
			m.busy = false
			p.mu.Unlock()
			return
		}
		m.again = false
		have := m.hash
		p.mu.Unlock()

		hash, err := p.sync(ctx, aware, name, have, log)

		p.mu.Lock()
		if err == nil {
			m.hash = hash
		}
		if ctx.Err() == nil && m.listed { // a cluster that is gone has no problem to report
			p.reportLocked(log, m, err)
		}
		if !m.again || ctx.Err() != nil {
			m.busy = false
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
	}
}

// sync reads the kubeconfig of a listed kind cluster and engages the cluster, or re-engages it
// when the kubeconfig's content differs from have (the hash of the engaged one). It returns the
// hash now engaged.
func (p *Provider) sync(ctx context.Context, aware multicluster.Aware, name multicluster.ClusterName, have string, log logr.Logger) (string, error) {
	data, err := p.kind.kubeconfig(ctx, string(name), p.opts.Internal)
	if err != nil {
		// An engaged cluster stays engaged: a stopped node container, a busy engine or a
		// cluster being deleted fail this read too, and the next poll sorts them out.
		return have, err
	}
	if kubeconfig.Hash(data) == have {
		// Same cluster; engage it again only if it stopped on its own meanwhile.
		if _, err := p.GetTyped(ctx, name); err == nil {
			return have, nil
		}
	}
	creds, err := p.load(data)
	if err != nil {
		return have, fmt.Errorf("kubeconfig of kind cluster %q: %w", name, err)
	}
	cl, err := cluster.New(creds.config, p.opts.ClusterOptions...)
	if err != nil {
		return have, fmt.Errorf("creating cluster %q: %w", name, err)
	}
	if err := ready(ctx, cl, p.opts.CacheSyncTimeout); err != nil {
		cl.GetHTTPClient().CloseIdleConnections()
		return have, fmt.Errorf("kind cluster %q is not ready: %w", name, err)
	}
	if err := p.AddOrReplace(ctx, name, cl, aware); err != nil {
		return have, err
	}
	switch have {
	case "":
		log.Info("Engaged cluster", "server", creds.config.Host)
	case creds.hash:
		log.Info("Engaged cluster again after it stopped", "server", creds.config.Host)
	default:
		log.Info("Re-engaged cluster: its kubeconfig changed (the kind cluster was created again)", "server", creds.config.Host)
	}
	return creds.hash, nil
}

// reportLocked logs a cluster's problem when it appears or changes, and its resolution; a
// problem that persists is logged again only at verbosity 1, so a broken cluster does not flood
// the log every poll.
func (p *Provider) reportLocked(log logr.Logger, m *member, err error) {
	if err == nil {
		if m.err != "" {
			m.err = ""
			log.Info("Kind cluster problem resolved")
		}
		return
	}
	if msg := err.Error(); msg != m.err {
		m.err = msg
		log.Error(err, "Cannot engage kind cluster; the other clusters are not affected, trying again at the next poll", "retryIn", p.opts.PollInterval.String())
		return
	}
	log.V(1).Info("Kind cluster problem persists", "error", err.Error())
}
