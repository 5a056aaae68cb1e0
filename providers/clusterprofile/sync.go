package clusterprofile

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"mcr.dev/core/clusters"
	"mcr.dev/core/providers/reconcileloop"
)

// state returns the remembered state of a profile, creating it.
func (p *Provider) state(key types.NamespacedName) *profileState {
	p.mu.Lock()
	defer p.mu.Unlock()
	st, ok := p.states[key]
	if !ok {
		st = &profileState{}
		p.states[key] = st
	}
	return st
}

// isEngaged reports whether the instance engaged for st is still the engaged one (it is not
// when its cache stopped on its own, or it was removed).
func (p *Provider) isEngaged(ctx context.Context, key types.NamespacedName, st *profileState) bool {
	if st.engaged == nil {
		return false
	}
	cl, err := p.GetTyped(ctx, ClusterName(key.Namespace, key.Name))
	return err == nil && cl == st.engaged
}

// sync brings the engagement of one ClusterProfile in line with the profile (and its kubeconfig
// Secret).
func (p *Provider) sync(ctx context.Context, key types.NamespacedName) reconcileloop.Result {
	name := ClusterName(key.Namespace, key.Name)
	log := p.log.WithValues("cluster", name)

	cp := &v1alpha1.ClusterProfile{}
	if err := p.host.GetCache().Get(ctx, key, cp); err != nil {
		if apierrors.IsNotFound(err) {
			p.forget(key, log, "the ClusterProfile is gone")
			return reconcileloop.Result{}
		}
		log.Error(err, "Reading the ClusterProfile from the host cache")
		return reconcileloop.Result{Retry: true}
	}
	st := p.state(key)
	switch {
	case cp.DeletionTimestamp != nil:
		p.disengage(ctx, key, st, nil, log, "the ClusterProfile is being deleted")
		return reconcileloop.Result{}
	case !p.selects(ctx, cp):
		p.disengage(ctx, key, st, cp, log, "the ClusterProfile is not selected by the provider's options")
		return reconcileloop.Result{}
	case !p.opts.IsReady(ctx, cp):
		return p.unready(ctx, key, st, cp, log)
	}
	if !st.unreadySince.IsZero() {
		st.unreadySince = time.Time{}
		UnreadyEngagedClusters.Dec()
		log.Info("ClusterProfile ready again within the grace period; the cluster stayed engaged")
	}
	engaged := p.isEngaged(ctx, key, st)
	if engaged {
		// Properties change without credentials changing: keep the identity current.
		p.setIdentity(name, IdentityOf(cp), true)
	}

	creds, err := p.credentialsOf(ctx, cp)
	if err != nil {
		var ce *credentialError
		if !errors.As(err, &ce) {
			log.Error(err, "Reading the credentials of the ClusterProfile")
			return reconcileloop.Result{Retry: true}
		}
		// An engaged cluster keeps its working credentials until new ones work.
		p.problems.Report(&st.problem, log, cp, ce.secret, ce.reason, ce.metricReason, ce.err)
		return reconcileloop.Result{}
	}
	p.warnDeprecated(st, cp, creds, log)
	if engaged && st.hash == creds.hash {
		p.problems.Resolve(&st.problem, log)
		return reconcileloop.Result{}
	}

	cl, err := cluster.New(creds.cfg, p.opts.ClusterOptions...)
	if err != nil {
		p.problems.Report(&st.problem, log, cp, creds.secret, ReasonInvalidAccessProvider, ReasonInvalidAccessProvider,
			fmt.Errorf("%s: creating the cluster: %w", creds.source, err))
		return reconcileloop.Result{}
	}

	checkCtx, cancel := context.WithTimeout(ctx, p.opts.CacheSyncTimeout)
	err = checkAccess(checkCtx, cl)
	cancel()
	if err != nil {
		cl.GetHTTPClient().CloseIdleConnections()
		if ctx.Err() != nil {
			return reconcileloop.Result{}
		}
		reason := ReasonClusterUnreachable
		switch {
		case errors.Is(err, errUnauthorized):
			reason = ReasonUnauthorized
		case errors.Is(err, errPluginFailed):
			reason = ReasonCredentialPluginFailed
		}
		p.problems.Report(&st.problem, log, cp, creds.secret, reason, reason, fmt.Errorf("%s: %w", creds.source, err))
		return reconcileloop.Result{Retry: true}
	}

	// The engaged cluster lives as long as the provider, never as long as this sync.
	if err := p.AddOrReplace(ctx, name, cl, p.aware); err != nil {
		if ctx.Err() != nil {
			return reconcileloop.Result{}
		}
		reason := ReasonEngageFailed
		if errors.Is(err, clusters.ErrCacheSyncTimeout) {
			reason = ReasonClusterUnreachable
		}
		p.problems.Report(&st.problem, log, cp, creds.secret, reason, reason, err)
		return reconcileloop.Result{Retry: true}
	}
	current, err := p.GetTyped(ctx, name)
	if err != nil {
		// Engaged and gone again at once (its cache stopped): the next sync starts over.
		return reconcileloop.Result{Retry: true}
	}
	rotated := engaged && current != st.engaged
	st.engaged, st.hash = current, creds.hash
	p.setIdentity(name, IdentityOf(cp), true)
	p.problems.Resolve(&st.problem, log)
	if rotated {
		log.Info("Re-engaged cluster with new credentials", "source", creds.source)
		p.events.Record(cp, creds.secret, corev1.EventTypeNormal, ReasonCredentialsRotated, "Cluster engaged again with the new credentials of "+creds.source)
		return reconcileloop.Result{}
	}
	log.Info("Engaged cluster", "source", creds.source)
	p.events.Record(cp, creds.secret, corev1.EventTypeNormal, ReasonClusterEngaged, "Cluster engaged with the credentials of "+creds.source)
	return reconcileloop.Result{}
}

// unready handles a selected profile that is not ready: an engaged cluster is kept for the grace
// period and disengaged after it; nothing is engaged.
func (p *Provider) unready(ctx context.Context, key types.NamespacedName, st *profileState, cp *v1alpha1.ClusterProfile, log logr.Logger) reconcileloop.Result {
	if !p.isEngaged(ctx, key, st) {
		p.disengage(ctx, key, st, cp, log, "the ClusterProfile is not ready")
		return reconcileloop.Result{}
	}
	grace := p.opts.UnreadyGracePeriod
	if st.unreadySince.IsZero() {
		st.unreadySince = time.Now()
		UnreadyEngagedClusters.Inc()
		if grace > 0 {
			log.Info("ClusterProfile is not ready; disengaging the cluster unless it is ready again within the grace period", "gracePeriod", grace)
			p.events.Record(cp, nil, corev1.EventTypeNormal, ReasonClusterUnready,
				fmt.Sprintf("ClusterProfile not ready; the cluster is disengaged unless it is ready again within %s", grace))
		}
	}
	if left := grace - time.Since(st.unreadySince); left > 0 {
		return reconcileloop.Result{After: left}
	}
	p.disengage(ctx, key, st, cp, log, fmt.Sprintf("the ClusterProfile is not ready (for longer than the grace period of %s)", grace))
	return reconcileloop.Result{}
}

// warnDeprecated records, once per profile and provider, that the access provider came from the
// deprecated status.credentialProviders.
func (p *Provider) warnDeprecated(st *profileState, cp *v1alpha1.ClusterProfile, creds *credentials, log logr.Logger) {
	if !creds.deprecated {
		st.deprecatedWarned = ""
		return
	}
	if st.deprecatedWarned == creds.source {
		return
	}
	st.deprecatedWarned = creds.source
	msg := fmt.Sprintf("the ClusterProfile lists %s in the deprecated status.credentialProviders; the cluster manager should list it in status.accessProviders", creds.source)
	log.Info("Using a deprecated field: " + msg)
	p.events.Record(cp, nil, corev1.EventTypeWarning, ReasonDeprecatedCredentialProviders, msg)
}

// disengage removes the cluster of a profile that exists but must not be engaged. cp, when not
// nil, gets a Normal Event if a cluster was engaged.
func (p *Provider) disengage(ctx context.Context, key types.NamespacedName, st *profileState, cp *v1alpha1.ClusterProfile, log logr.Logger, why string) {
	p.problems.Resolve(&st.problem, log)
	if !st.unreadySince.IsZero() {
		st.unreadySince = time.Time{}
		UnreadyEngagedClusters.Dec()
	}
	name := ClusterName(key.Namespace, key.Name)
	wasEngaged := p.isEngaged(ctx, key, st)
	if st.engaged != nil {
		p.Remove(name)
		st.engaged, st.hash = nil, ""
	}
	p.setIdentity(name, Identity{}, false)
	if !wasEngaged {
		log.V(1).Info("Cluster not engaged: " + why)
		return
	}
	log.Info("Disengaged cluster: " + why)
	if cp != nil {
		p.events.Record(cp, nil, corev1.EventTypeNormal, ReasonClusterDisengaged, "Cluster disengaged: "+why)
	}
}

// forget disengages the cluster of a profile that is gone and drops what the provider knew.
func (p *Provider) forget(key types.NamespacedName, log logr.Logger, why string) {
	p.mu.Lock()
	st, ok := p.states[key]
	delete(p.states, key)
	p.mu.Unlock()
	if !ok {
		return
	}
	p.problems.Resolve(&st.problem, log)
	if !st.unreadySince.IsZero() {
		UnreadyEngagedClusters.Dec()
	}
	name := ClusterName(key.Namespace, key.Name)
	p.setIdentity(name, Identity{}, false)
	if st.engaged != nil {
		p.Remove(name)
		log.Info("Disengaged cluster: " + why)
	}
}
