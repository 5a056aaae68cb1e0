package kubeconfig

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	authenticationv1client "k8s.io/client-go/kubernetes/typed/authentication/v1"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/clusters"
	"mcr.dev/core/kubeconfig"
	"mcr.dev/core/multicluster"
)

// secretState is what the provider remembers about one selected Secret.
type secretState struct {
	// name is the cluster name the Secret owns; claimed is false while it waits for a name
	// another Secret owns.
	name    multicluster.ClusterName
	claimed bool
	// hash is the content hash of the kubeconfig that is engaged, and ctx the context the
	// cluster was engaged with; ctx is nil when nothing is engaged for this Secret.
	hash string
	ctx  context.Context
	// rejected is the hash of a kubeconfig that was refused for good (policy, decoding), so that
	// seeing it again does not repeat the Event.
	rejected string
}

func (s *secretState) engaged() bool { return s.ctx != nil && s.ctx.Err() == nil }

// sync brings the cluster of one Secret in line with the Secret. It returns true when the
// failure is transient (unreachable member, failed engage) and the Secret should be retried
// with backoff.
func (p *Provider) sync(ctx context.Context, key types.NamespacedName) (retry bool) {
	log := p.log.WithValues("secret", key.String())
	log.V(1).Info("Syncing kubeconfig Secret")
	secret, err := p.readSecret(ctx, key)
	if err != nil {
		log.Error(err, "Reading Secret from the host cache")
		return true
	}
	if secret == nil {
		p.forget(key, log)
		return false
	}

	name := p.opts.ClusterName(secret)
	log = log.WithValues("cluster", name)
	if name == "" { // the manager's name for its local cluster
		p.fail(secret, log, ReasonInvalidKubeconfig, ReasonClusterSetupFailed,
			fmt.Errorf("kubeconfig Secret %s: Options.ClusterName returned an empty cluster name", key))
		return false
	}
	data := secret.Data[p.opts.SecretKey]
	hash := kubeconfig.Hash(data)

	if renamed, oldName := p.renamed(key, name); renamed {
		log.Info("Secret maps to a new cluster name, disengaging the old one", "oldCluster", oldName)
		p.release(key, log)
	}
	owner, claimed := p.claim(key, name)
	if !claimed {
		p.fail(secret, log, ReasonClusterNameConflict, ReasonClusterNameConflict,
			fmt.Errorf("kubeconfig Secret %s: cluster name %q is already used by Secret %s; it is served once that Secret goes away", key, name, owner))
		return false
	}

	p.mu.Lock()
	st := p.secrets[key]
	upToDate := st.engaged() && st.hash == hash
	alreadyRejected := st.rejected == hash && !st.engaged()
	p.mu.Unlock()
	if upToDate || alreadyRejected {
		return false
	}

	cl, reason, err := p.newCluster(key, data)
	if err != nil {
		p.mu.Lock()
		st.rejected = hash
		p.mu.Unlock()
		// The Secret no longer describes a usable cluster: whatever it described before goes.
		p.disengage(key, log)
		p.fail(secret, log, ReasonInvalidKubeconfig, reason, err)
		return false
	}

	if !p.opts.SkipConnectivityCheck {
		if reason, err := p.checkConnectivity(ctx, cl); err != nil {
			p.fail(secret, log, reason, reason, fmt.Errorf("kubeconfig Secret %s: cluster %q: %w", key, name, err))
			return true
		}
	}

	if err := p.AddOrReplace(ctx, name, cl, &engageHook{p: p, key: key, aware: p.aware}); err != nil {
		reason := ReasonEngageFailed
		if errors.Is(err, clusters.ErrCacheSyncTimeout) {
			reason = ReasonClusterUnreachable
		}
		if ctx.Err() == nil {
			p.fail(secret, log, reason, reason, fmt.Errorf("kubeconfig Secret %s: %w", key, err))
		}
		return true
	}
	p.mu.Lock()
	st.hash, st.rejected = hash, ""
	p.mu.Unlock()
	log.Info("Cluster engaged from kubeconfig Secret")
	p.event(secret, corev1.EventTypeNormal, ReasonClusterEngaged, fmt.Sprintf("Cluster %q engaged", name))
	return false
}

// newCluster turns kubeconfig bytes into an unstarted cluster. Errors name the Secret and come
// with the metric reason; they never contain the kubeconfig's content.
func (p *Provider) newCluster(key types.NamespacedName, data []byte) (cluster.Cluster, string, error) {
	if len(data) == 0 {
		return nil, ReasonMissingKubeconfig, fmt.Errorf("kubeconfig Secret %s has no kubeconfig under data key %q", key, p.opts.SecretKey)
	}
	cfg, err := kubeconfig.Load(data, p.opts.Policy)
	if err != nil {
		return nil, kubeconfig.Reason(err), fmt.Errorf("kubeconfig Secret %s: kubeconfig rejected: %w", key, err)
	}
	if cfg.QPS == 0 && cfg.Burst == 0 {
		cfg.QPS, cfg.Burst = defaultQPS, defaultBurst
	}
	for _, opt := range p.opts.RESTOptions {
		if err := opt(cfg); err != nil {
			return nil, ReasonClusterSetupFailed, fmt.Errorf("kubeconfig Secret %s: applying RESTOptions: %w", key, err)
		}
	}
	cl, err := cluster.New(cfg, p.opts.ClusterOptions...)
	if err != nil {
		return nil, ReasonClusterSetupFailed, fmt.Errorf("kubeconfig Secret %s: creating cluster: %w", key, err)
	}
	return cl, "", nil
}

// checkConnectivity asks the member who we are. It proves the member answers and accepts the
// credentials, with no RBAC beyond what every authenticated user has: a Forbidden or NotFound
// answer (SelfSubjectReview not allowed or not served) still shows both.
func (p *Provider) checkConnectivity(ctx context.Context, cl cluster.Cluster) (reason string, err error) {
	ctx, cancel := context.WithTimeout(ctx, p.opts.CacheSyncTimeout)
	defer cancel()
	c, err := authenticationv1client.NewForConfigAndClient(cl.GetConfig(), cl.GetHTTPClient())
	if err != nil {
		return ReasonClusterUnreachable, err
	}
	_, err = c.SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	switch {
	case err == nil, apierrors.IsForbidden(err), apierrors.IsNotFound(err):
		return "", nil
	case apierrors.IsUnauthorized(err):
		return ReasonUnauthorized, errors.New("the member refused the credentials (401 Unauthorized)")
	case ctx.Err() != nil:
		return ReasonClusterUnreachable, fmt.Errorf("no answer within %s: %w", p.opts.CacheSyncTimeout, err)
	}
	return ReasonClusterUnreachable, err
}

// renamed reports whether key owns a cluster name other than name.
func (p *Provider) renamed(key types.NamespacedName, name multicluster.ClusterName) (bool, multicluster.ClusterName) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.secrets[key]
	if st != nil && st.claimed && st.name != name {
		return true, st.name
	}
	return false, ""
}

// claim makes key the owner of name, unless another Secret owns it; then key waits for it.
func (p *Provider) claim(key types.NamespacedName, name multicluster.ClusterName) (types.NamespacedName, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.secrets[key]
	if st == nil {
		st = &secretState{}
		p.secrets[key] = st
	}
	if owner, ok := p.owners[name]; ok && owner != key {
		st.name, st.claimed = name, false
		if p.waiting[name] == nil {
			p.waiting[name] = map[types.NamespacedName]struct{}{}
		}
		p.waiting[name][key] = struct{}{}
		return owner, false
	}
	p.owners[name] = key
	st.name, st.claimed = name, true
	if w := p.waiting[name]; w != nil {
		delete(w, key)
	}
	return key, true
}

// disengage removes the cluster engaged for key, if any, and returns once it has stopped.
func (p *Provider) disengage(key types.NamespacedName, log logr.Logger) {
	p.mu.Lock()
	st := p.secrets[key]
	if st == nil || !st.claimed {
		p.mu.Unlock()
		return
	}
	name, was := st.name, st.ctx != nil
	// Clearing ctx first tells instanceEnded that this end is intended.
	st.ctx, st.hash = nil, ""
	p.mu.Unlock()
	p.Remove(name)
	if was {
		log.Info("Cluster disengaged")
	}
}

// release disengages key's cluster and gives up its name, waking Secrets waiting for it.
func (p *Provider) release(key types.NamespacedName, log logr.Logger) {
	p.disengage(key, log)
	p.mu.Lock()
	st := p.secrets[key]
	var wake []types.NamespacedName
	if st != nil {
		if st.claimed && p.owners[st.name] == key {
			delete(p.owners, st.name)
			for k := range p.waiting[st.name] {
				wake = append(wake, k)
			}
			delete(p.waiting, st.name)
		} else if w := p.waiting[st.name]; w != nil {
			delete(w, key)
		}
		st.claimed, st.rejected = false, ""
	}
	p.mu.Unlock()
	for _, k := range wake {
		p.queue.Add(k)
	}
}

// forget handles a Secret that was deleted or is no longer selected.
func (p *Provider) forget(key types.NamespacedName, log logr.Logger) {
	p.release(key, log)
	p.mu.Lock()
	delete(p.secrets, key)
	p.mu.Unlock()
}

// engaged records the context an instance of key's cluster was engaged with, and arranges for
// an unintended end of it (the member's cluster failed) to be retried.
func (p *Provider) engaged(ctx context.Context, key types.NamespacedName) {
	p.mu.Lock()
	if st := p.secrets[key]; st != nil {
		st.ctx = ctx
	}
	p.mu.Unlock()
	context.AfterFunc(ctx, func() {
		p.mu.Lock()
		st := p.secrets[key]
		mine := st != nil && st.ctx == ctx
		if mine {
			st.ctx, st.hash = nil, ""
		}
		p.mu.Unlock()
		if mine && p.ctx.Err() == nil {
			p.log.Info("Cluster stopped on its own, retrying", "secret", key.String(), "cause", context.Cause(ctx).Error())
			p.queue.AddRateLimited(key)
		}
	})
}

// engageHook engages with the provider's Aware and tells the provider which context the
// cluster was engaged with.
type engageHook struct {
	p     *Provider
	key   types.NamespacedName
	aware multicluster.Aware
}

func (h *engageHook) Engage(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster) error {
	if h.aware != nil {
		if err := h.aware.Engage(ctx, name, cl); err != nil {
			return err
		}
	}
	h.p.engaged(ctx, h.key)
	return nil
}
