package configmapprovider

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"mcr.dev/core/clusters"
	"mcr.dev/core/kubeconfig"
	"mcr.dev/core/multicluster"
)

// Defaults of Options.
const (
	DefaultNamespace     = "mcr-system"
	DefaultName          = "clusters"
	DefaultRetryMaxDelay = time.Minute
	retryMinDelay        = time.Second
)

// Options configures a Provider. The zero value of every field selects its default.
type Options struct {
	// Namespace is the host namespace of the ConfigMap. Defaults to DefaultNamespace
	// ("mcr-system").
	Namespace string

	// Name is the name of the ConfigMap. Defaults to DefaultName ("clusters").
	Name string

	// Policy says what a kubeconfig may contain. Defaults to the zero kubeconfig.Policy: inline
	// credentials only; no exec or auth-provider plugins, local files or insecure TLS.
	Policy kubeconfig.Policy

	// ClusterOptions are passed to cluster.New for every member (scheme, cache options, ...).
	// Defaults to none.
	ClusterOptions []cluster.Option

	// CacheSyncTimeout bounds the wait for a member's cache to sync, and for the host's
	// informer at start. Defaults to clusters.DefaultCacheSyncTimeout (one minute).
	CacheSyncTimeout time.Duration

	// RetryMaxDelay is the longest backoff between attempts to engage a member that failed
	// (unreachable, refused by an Aware). Defaults to DefaultRetryMaxDelay (one minute).
	RetryMaxDelay time.Duration

	// Log receives the provider's messages, with the cluster under the key "cluster".
	// Defaults to controller-runtime's logger named "configmap-provider".
	Log logr.Logger
}

// withDefaults is the only place defaults are applied.
func (o Options) withDefaults() Options {
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.Name == "" {
		o.Name = DefaultName
	}
	if o.CacheSyncTimeout <= 0 {
		o.CacheSyncTimeout = clusters.DefaultCacheSyncTimeout
	}
	if o.RetryMaxDelay <= 0 {
		o.RetryMaxDelay = DefaultRetryMaxDelay
	}
	if o.Log.GetSink() == nil {
		o.Log = ctrllog.Log.WithName("configmap-provider")
	}
	return o
}

var (
	_ multicluster.Provider         = &Provider{}
	_ multicluster.ProviderRunnable = &Provider{}
)

// snippet:begin provider-type

// Provider engages one cluster per key of a ConfigMap in the host cluster. Create it with New
// and hand it to a manager, which calls Start. Get and IndexField come from the embedded
// clusters.Clusters.
type Provider struct {
	clusters.Clusters[cluster.Cluster]

	opts Options
	log  logr.Logger
	host cluster.Cluster // its cache holds the one ConfigMap

	mu      sync.Mutex
	workers map[multicluster.ClusterName]*worker
	// engaged holds the content hash of each engaged member's kubeconfig.
	engaged  map[multicluster.ClusterName]string
	started  bool
	stopping bool // Start is returning: no new workers
}

// snippet:end provider-type

// worker brings one member's engagement in line with the ConfigMap; one runs at a time per
// member, so members never wait for each other.
type worker struct {
	running bool
	again   bool // the ConfigMap changed while running: look once more
	delay   time.Duration
}

// New returns a provider for the ConfigMap that opts names, in the host cluster of hostConfig.
func New(hostConfig *rest.Config, opts Options) (*Provider, error) {
	o := opts.withDefaults()
	host, err := cluster.New(hostConfig, func(co *cluster.Options) {
		// Cache the one ConfigMap and nothing else: the provider needs RBAC for nothing else.
		co.Cache.ByObject = map[client.Object]cache.ByObject{&corev1.ConfigMap{}: {
			Namespaces: map[string]cache.Config{o.Namespace: {}},
			Field:      fields.OneTermEqualSelector("metadata.name", o.Name),
		}}
		co.Logger = o.Log.WithName("host")
	})
	if err != nil {
		return nil, fmt.Errorf("configmap provider: creating the host cluster: %w", err)
	}
	p := &Provider{
		opts:    o,
		log:     o.Log,
		host:    host,
		workers: map[multicluster.ClusterName]*worker{},
		engaged: map[multicluster.ClusterName]string{},
	}
	p.Options = clusters.Options[cluster.Cluster]{CacheSyncTimeout: o.CacheSyncTimeout, Log: o.Log}
	return p, nil
}

// snippet:begin provider-start

// Start watches the ConfigMap and engages its clusters with aware until ctx ends; then it
// disengages them all and returns. The manager calls it.
func (p *Provider) Start(ctx context.Context, aware multicluster.Aware) error {
	p.mu.Lock()
	if p.started {
		p.mu.Unlock()
		return errors.New("configmap provider: Start called twice")
	}
	p.started = true
	p.mu.Unlock()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	hostDone := make(chan struct{})
	go func() {
		defer close(hostDone)
		if err := p.host.Start(ctx); err != nil {
			p.log.Error(err, "The host cluster stopped")
		}
	}()
	var workers sync.WaitGroup
	defer func() {
		cancel()
		p.mu.Lock()
		p.stopping = true
		p.mu.Unlock()
		<-hostDone
		workers.Wait()
		p.RemoveAll() // every cluster's context ends: disengaged
	}()

	// Every change of the ConfigMap looks at every key it has, and had.
	informer, err := p.host.GetCache().GetInformer(ctx, &corev1.ConfigMap{})
	if err != nil {
		return fmt.Errorf("configmap provider: watching ConfigMaps: %w", err)
	}
	changed := func(any) { p.kickAll(ctx, aware, &workers) }
	if _, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    changed,
		UpdateFunc: func(_, obj any) { changed(obj) },
		DeleteFunc: changed,
	}); err != nil {
		return fmt.Errorf("configmap provider: watching ConfigMaps: %w", err)
	}
	syncCtx, syncCancel := context.WithTimeout(ctx, p.opts.CacheSyncTimeout)
	synced := p.host.GetCache().WaitForCacheSync(syncCtx)
	syncCancel()
	if !synced && ctx.Err() == nil {
		return fmt.Errorf("configmap provider: the host's cache did not sync within %s", p.opts.CacheSyncTimeout)
	}
	p.kickAll(ctx, aware, &workers) // also when the ConfigMap does not exist (yet)
	<-ctx.Done()
	return nil
}

// snippet:end provider-start

// kickAll starts, or asks for another pass of, the worker of every member named in the
// ConfigMap or engaged now.
func (p *Provider) kickAll(ctx context.Context, aware multicluster.Aware, workers *sync.WaitGroup) {
	data, _ := p.read(ctx)
	p.mu.Lock()
	defer p.mu.Unlock()
	names := map[multicluster.ClusterName]bool{}
	for key := range data {
		names[multicluster.ClusterName(key)] = true
	}
	for name := range p.engaged {
		names[name] = true
	}
	for name := range names {
		p.kickLocked(ctx, aware, workers, name)
	}
}

func (p *Provider) kickLocked(ctx context.Context, aware multicluster.Aware, workers *sync.WaitGroup, name multicluster.ClusterName) {
	if p.stopping || ctx.Err() != nil {
		return
	}
	w := p.workers[name]
	if w == nil {
		w = &worker{}
		p.workers[name] = w
	}
	if w.running {
		w.again = true
		return
	}
	w.running = true
	workers.Go(func() { p.work(ctx, aware, workers, name, w) })
}

// work syncs one member until nothing changed meanwhile; a failure is retried with backoff.
func (p *Provider) work(ctx context.Context, aware multicluster.Aware, workers *sync.WaitGroup, name multicluster.ClusterName, w *worker) {
	log := p.log.WithValues("cluster", name)
	for {
		err := p.sync(ctx, aware, name, log)
		p.mu.Lock()
		if err != nil && ctx.Err() == nil {
			w.delay = min(max(2*w.delay, retryMinDelay), p.opts.RetryMaxDelay)
			log.Error(err, "Cannot engage cluster; retrying", "after", w.delay.String())
			time.AfterFunc(w.delay, func() {
				p.mu.Lock()
				defer p.mu.Unlock()
				p.kickLocked(ctx, aware, workers, name)
			})
		} else if err == nil {
			w.delay = 0
		}
		if !w.again || ctx.Err() != nil {
			w.running = false
			p.mu.Unlock()
			return
		}
		w.again = false
		p.mu.Unlock()
	}
}

// snippet:begin provider-sync

// sync engages, re-engages or disengages one member as the ConfigMap says.
func (p *Provider) sync(ctx context.Context, aware multicluster.Aware, name multicluster.ClusterName, log logr.Logger) error {
	data, err := p.read(ctx)
	if err != nil {
		return err
	}
	raw, listed := data[string(name)]
	p.mu.Lock()
	have, engaged := p.engaged[name]
	p.mu.Unlock()

	if !listed {
		if engaged {
			p.Remove(name) // cancels the cluster's context: disengaged
			p.forget(name)
			log.Info("Disengaged cluster: removed from the ConfigMap")
		}
		return nil
	}
	hash := kubeconfig.Hash([]byte(raw))
	if engaged && hash == have {
		if _, err := p.Get(ctx, name); err == nil {
			return nil // unchanged kubeconfig, e.g. another key or an annotation changed
		}
		// The cluster stopped on its own: engage it again.
	}
	// Refused kubeconfigs are not retried: the next change of the ConfigMap is.
	cfg, err := kubeconfig.Load([]byte(raw), p.opts.Policy)
	if err != nil {
		log.Error(err, "Refusing kubeconfig", "reason", kubeconfig.Reason(err))
		return nil
	}
	cl, err := cluster.New(cfg, p.opts.ClusterOptions...)
	if err != nil {
		return fmt.Errorf("creating cluster %q: %w", name, err)
	}
	// AddOrReplace starts the cluster, waits for its cache, applies the indexes and engages it;
	// a running instance is replaced only after the new one is engaged. The provider's ctx,
	// never a reconcile's, bounds the cluster's life.
	if err := p.AddOrReplace(ctx, name, cl, aware); err != nil {
		return err
	}
	p.mu.Lock()
	p.engaged[name] = hash
	p.mu.Unlock()
	log.Info("Engaged cluster", "replaced", engaged)
	return nil
}

// snippet:end provider-sync

func (p *Provider) forget(name multicluster.ClusterName) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.engaged, name)
}

// read returns the ConfigMap's entries whose keys are valid cluster names; a missing
// ConfigMap is an empty fleet.
func (p *Provider) read(ctx context.Context) (map[string]string, error) {
	cm := &corev1.ConfigMap{}
	err := p.host.GetCache().Get(ctx, client.ObjectKey{Namespace: p.opts.Namespace, Name: p.opts.Name}, cm)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading ConfigMap %s/%s: %w", p.opts.Namespace, p.opts.Name, err)
	}
	out := make(map[string]string, len(cm.Data))
	for key, value := range cm.Data {
		// ConfigMap keys allow "." and "_", which make poor cluster names: keep DNS labels.
		if errs := validation.IsDNS1123Label(key); len(errs) > 0 {
			p.log.Info("Ignoring entry: its key is not a DNS label", "cluster", key)
			continue
		}
		out[key] = value
	}
	return out, nil
}
