package kubeconfig

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	mcrkubeconfig "mcr.dev/providers/kubeconfig"
)

const (
	// DefaultKubeconfigSecretLabel is the default of Options.KubeconfigSecretLabel: a Secret
	// is a member's kubeconfig when it carries this label with the value "true".
	DefaultKubeconfigSecretLabel = mcrkubeconfig.UpstreamSecretLabel

	// DefaultKubeconfigSecretKey is the default of Options.KubeconfigSecretKey.
	DefaultKubeconfigSecretKey = mcrkubeconfig.DefaultSecretKey
)

// Options are multicluster-runtime's options of the kubeconfig provider.
type Options struct {
	// Namespace is the namespace of the kubeconfig Secrets. Defaults to
	// mcrkubeconfig.DefaultNamespace ("mcr-system").
	Namespace string
	// KubeconfigSecretLabel is the label that selects the Secrets. Defaults to
	// DefaultKubeconfigSecretLabel.
	KubeconfigSecretLabel string
	// KubeconfigSecretKey is the data key of the kubeconfig. Defaults to
	// DefaultKubeconfigSecretKey.
	KubeconfigSecretKey string
	// ClusterOptions are passed to cluster.New for every member.
	ClusterOptions []cluster.Option
	// RESTOptions change every member's rest.Config before its cluster is built.
	RESTOptions []func(cfg *rest.Config) error
}

// Provider serves the clusters of the kubeconfig Secrets once SetupWithManager has run; until
// then it serves none.
type Provider struct {
	opts Options

	mu      sync.Mutex
	inner   *mcrkubeconfig.Provider
	ready   chan struct{} // closed by SetupWithManager
	indexes []index       // recorded before SetupWithManager
}

type index struct {
	obj     client.Object
	field   string
	extract client.IndexerFunc
}

var _ multicluster.ProviderRunnable = &Provider{}

// New returns a provider with opts. Pass it to mcmanager.New, then call SetupWithManager.
func New(opts Options) *Provider {
	return &Provider{opts: opts, ready: make(chan struct{})}
}

// SetupWithManager builds mcr's provider on the host cluster of mgr. The manager runs it.
func (p *Provider) SetupWithManager(_ context.Context, mgr mcmanager.Manager) error {
	if mgr == nil {
		return errors.New("kubeconfig provider: manager is nil")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.inner != nil {
		return errors.New("kubeconfig provider: SetupWithManager called twice")
	}
	inner, err := mcrkubeconfig.New(mgr.GetLocalManager().GetConfig(), mcrkubeconfig.Options{
		Namespace:   p.opts.Namespace,
		SecretLabel: firstNonEmpty(p.opts.KubeconfigSecretLabel, DefaultKubeconfigSecretLabel),
		SecretKey:   p.opts.KubeconfigSecretKey,
		Options:     kit.Options{ClusterOptions: p.opts.ClusterOptions, RESTOptions: p.opts.RESTOptions},
	})
	if err != nil {
		return fmt.Errorf("kubeconfig provider: %w", err)
	}
	for _, idx := range p.indexes {
		if err := inner.IndexField(context.Background(), idx.obj, idx.field, idx.extract); err != nil {
			return fmt.Errorf("kubeconfig provider: index %q: %w", idx.field, err)
		}
	}
	p.inner, p.indexes = inner, nil
	close(p.ready)
	return nil
}

// Start runs the provider once SetupWithManager has built it; the manager calls it.
func (p *Provider) Start(ctx context.Context, aware multicluster.Aware) error {
	select {
	case <-p.ready:
		return p.inner.Start(ctx, aware)
	case <-ctx.Done():
		return nil
	}
}

func (p *Provider) provider() *mcrkubeconfig.Provider {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.inner
}

// Get returns the engaged cluster name.
func (p *Provider) Get(ctx context.Context, name multicluster.ClusterName) (cluster.Cluster, error) {
	inner := p.provider()
	if inner == nil {
		return nil, fmt.Errorf("cluster %q: %w", name, multicluster.ErrClusterNotFound)
	}
	return inner.Get(ctx, name)
}

// IndexField adds an index to every member cluster, present and future.
func (p *Provider) IndexField(ctx context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	p.mu.Lock()
	inner := p.inner
	if inner == nil {
		p.indexes = append(p.indexes, index{obj: obj, field: field, extract: extract})
	}
	p.mu.Unlock()
	if inner == nil {
		return nil
	}
	return inner.IndexField(ctx, obj, field, extract)
}

// ListClusters returns the names of the engaged clusters.
func (p *Provider) ListClusters() []multicluster.ClusterName {
	if inner := p.provider(); inner != nil {
		return inner.ListClusters()
	}
	return nil
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
