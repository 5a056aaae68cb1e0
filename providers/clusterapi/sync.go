package clusterapi

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/clusters"
	"mcr.dev/core/kubeconfig"
)

// state returns the remembered state of a Cluster, creating it.
func (p *Provider) state(key types.NamespacedName) *clusterState {
	p.mu.Lock()
	defer p.mu.Unlock()
	st, ok := p.states[key]
	if !ok {
		st = &clusterState{}
		p.states[key] = st
	}
	return st
}

// isEngaged reports whether the instance engaged for st is still the engaged one (it is not
// when its cache stopped on its own, or it was removed).
func (p *Provider) isEngaged(ctx context.Context, key types.NamespacedName, st *clusterState) bool {
	if st.engaged == nil {
		return false
	}
	cl, err := p.GetTyped(ctx, ClusterName(key.Namespace, key.Name))
	return err == nil && cl == st.engaged
}

// sync brings the engagement of one Cluster in line with the Cluster and its kubeconfig Secret.
// It returns true when the failure is transient (unreachable workload cluster, failed engage)
// and the Cluster should be retried with backoff.
func (p *Provider) sync(ctx context.Context, key types.NamespacedName) (retry bool) {
	name := ClusterName(key.Namespace, key.Name)
	log := p.log.WithValues("cluster", name)

	obj := p.opts.APIVersion.newObject()
	if err := p.host.GetCache().Get(ctx, key, obj); err != nil {
		if apierrors.IsNotFound(err) {
			p.forget(key, log, "the Cluster is gone")
			return false
		}
		log.Error(err, "Reading the Cluster from the host cache")
		return true
	}
	st := p.state(key)
	switch {
	case obj.GetDeletionTimestamp() != nil:
		p.disengage(ctx, key, st, nil, log, "the Cluster is being deleted")
		return false
	case !p.selects(ctx, obj):
		p.disengage(ctx, key, st, obj, log, "the Cluster is not selected by the provider's options")
		return false
	case !p.opts.IsReady(ctx, obj):
		p.disengage(ctx, key, st, obj, log, "the Cluster is not ready")
		return false
	}

	secretKey := types.NamespacedName{Namespace: key.Namespace, Name: KubeconfigSecretName(key.Name)}
	secret := &corev1.Secret{}
	if err := p.host.GetCache().Get(ctx, secretKey, secret); err != nil {
		if !apierrors.IsNotFound(err) {
			log.Error(err, "Reading the kubeconfig Secret from the host cache", "secret", secretKey)
			return true
		}
		// An engaged cluster keeps its working credentials: the control plane provider
		// recreates the Secret, and deleting the Cluster is what disengages it.
		p.problems.Report(&st.problem, log, obj, nil, ReasonKubeconfigSecretMissing, ReasonKubeconfigSecretMissing,
			fmt.Errorf("kubeconfig Secret %s not found (it must be labeled %s=%s)", secretKey, ClusterNameLabel, key.Name))
		return false
	}
	data := secret.Data[KubeconfigDataKey]
	if len(data) == 0 {
		p.problems.Report(&st.problem, log, obj, secret, ReasonInvalidKubeconfig, reasonMissingData,
			fmt.Errorf("kubeconfig Secret %s has no data under key %q", secretKey, KubeconfigDataKey))
		return false
	}
	hash := kubeconfig.Hash(data)
	engaged := p.isEngaged(ctx, key, st)
	if engaged && st.hash == hash {
		p.problems.Resolve(&st.problem, log)
		return false
	}
	if st.rejected == hash {
		return false
	}

	cfg, err := p.restConfig(data)
	if err != nil {
		st.rejected = hash
		reason := kubeconfig.Reason(err)
		if reason == "" {
			reason = ReasonInvalidKubeconfig
		}
		p.problems.Report(&st.problem, log, obj, secret, ReasonInvalidKubeconfig, reason,
			fmt.Errorf("kubeconfig Secret %s: %w", secretKey, err))
		return false
	}
	cl, err := cluster.New(cfg, p.opts.ClusterOptions...)
	if err != nil {
		st.rejected = hash
		p.problems.Report(&st.problem, log, obj, secret, ReasonInvalidKubeconfig, ReasonInvalidKubeconfig,
			fmt.Errorf("kubeconfig Secret %s: creating the cluster: %w", secretKey, err))
		return false
	}
	st.rejected = ""

	checkCtx, cancel := context.WithTimeout(ctx, p.opts.CacheSyncTimeout)
	err = checkAccess(checkCtx, cl)
	cancel()
	if err != nil {
		cl.GetHTTPClient().CloseIdleConnections()
		if ctx.Err() != nil {
			return false
		}
		reason := ReasonClusterUnreachable
		if errors.Is(err, errUnauthorized) {
			reason = ReasonUnauthorized
		}
		p.problems.Report(&st.problem, log, obj, secret, reason, reason, fmt.Errorf("kubeconfig Secret %s: %w", secretKey, err))
		return true
	}

	// The engaged cluster lives as long as the provider, never as long as this sync.
	if err := p.AddOrReplace(ctx, name, cl, p.aware); err != nil {
		if ctx.Err() != nil {
			return false
		}
		reason := ReasonEngageFailed
		if errors.Is(err, clusters.ErrCacheSyncTimeout) {
			reason = ReasonClusterUnreachable
		}
		p.problems.Report(&st.problem, log, obj, secret, reason, reason, err)
		return true
	}
	current, err := p.GetTyped(ctx, name)
	if err != nil {
		// Engaged and gone again at once (its cache stopped): the next sync starts over.
		return true
	}
	rotated := engaged && current != st.engaged
	st.engaged, st.hash = current, hash
	p.problems.Resolve(&st.problem, log)
	switch {
	case rotated:
		log.Info("Re-engaged cluster with its new kubeconfig")
		p.events.Record(obj, secret, corev1.EventTypeNormal, ReasonCredentialsRotated, "Cluster engaged again with the new kubeconfig of Secret "+secretKey.Name)
	case !engaged:
		log.Info("Engaged cluster")
		p.events.Record(obj, secret, corev1.EventTypeNormal, ReasonClusterEngaged, "Cluster engaged with the kubeconfig of Secret "+secretKey.Name)
	default:
		// The kubeconfig changed in form only (clusters.EqualConfigs): nothing was replaced.
		log.V(1).Info("Kubeconfig changed without changing credentials or endpoint")
	}
	return false
}

// disengage removes the cluster of a Cluster that exists but must not be engaged. obj, when not
// nil, gets a Normal Event if a cluster was engaged.
func (p *Provider) disengage(ctx context.Context, key types.NamespacedName, st *clusterState, obj client.Object, log logr.Logger, why string) {
	p.problems.Resolve(&st.problem, log)
	st.rejected = ""
	wasEngaged := p.isEngaged(ctx, key, st)
	if st.engaged != nil {
		p.Remove(ClusterName(key.Namespace, key.Name))
		st.engaged, st.hash = nil, ""
	}
	if !wasEngaged {
		log.V(1).Info("Cluster not engaged: " + why)
		return
	}
	log.Info("Disengaged cluster: " + why)
	if obj != nil {
		p.events.Record(obj, nil, corev1.EventTypeNormal, ReasonClusterDisengaged, "Cluster disengaged: "+why)
	}
}

// forget disengages the cluster of a Cluster that is gone and drops what the provider knew.
func (p *Provider) forget(key types.NamespacedName, log logr.Logger, why string) {
	p.mu.Lock()
	st, ok := p.states[key]
	delete(p.states, key)
	p.mu.Unlock()
	if !ok {
		return
	}
	p.problems.Resolve(&st.problem, log)
	if st.engaged != nil {
		p.Remove(ClusterName(key.Namespace, key.Name))
		log.Info("Disengaged cluster: " + why)
	}
}
