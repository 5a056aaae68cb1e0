// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterprofile

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"mcr.dev/core/providers/kit"
)

// state returns what the provider keeps of a profile, creating it.
func (p *Provider) state(key types.NamespacedName) *profileState {
	p.mu.Lock()
	defer p.mu.Unlock()
	st, ok := p.profiles[key]
	if !ok {
		st = &profileState{}
		p.profiles[key] = st
	}
	return st
}

// sync brings the engagement of one ClusterProfile in line with the profile (and its kubeconfig
// Secret).
func (p *Provider) sync(ctx context.Context, key types.NamespacedName) kit.Result {
	name := ClusterName(key.Namespace, key.Name)
	cp := &v1alpha1.ClusterProfile{}
	if res, ok := p.engine.GetHostObject(ctx, p.host.GetCache(), key, cp, name, func() kit.Result {
		p.forget(key, "the ClusterProfile is gone")
		return kit.Result{}
	}); !ok {
		return res
	}
	switch {
	case cp.DeletionTimestamp != nil:
		p.disengage(key, nil, "the ClusterProfile is being deleted")
		return kit.Result{}
	case !p.selects(ctx, cp):
		p.disengage(key, cp, "the ClusterProfile is not selected by the provider's options")
		return kit.Result{}
	case !p.opts.IsReady(ctx, cp):
		return p.unready(key, cp)
	}
	st := p.state(key)
	if p.setUnready(st, false) {
		p.engine.Logger().Info("ClusterProfile ready again within the grace period; the cluster stayed engaged", "cluster", name)
	}
	// Properties change without credentials changing: keep the identity current.
	p.setIdentity(key, st, cp)

	member := kit.Member{Name: name, Regarding: cp}
	creds, err := p.credentialsOf(ctx, cp)
	if err != nil {
		var ce *credentialError
		if !errors.As(err, &ce) {
			p.engine.Logger().Error(err, "Reading the credentials of the ClusterProfile", "cluster", name)
			return kit.Result{Retry: true}
		}
		if ce.secret != nil {
			member.Related = ce.secret
		}
		// An engaged cluster keeps its working credentials until new ones work.
		return p.engine.Fail(key, member, kit.WithMetricReason(kit.Permanent(ce.reason, ce.err), ce.metricReason))
	}
	p.warnDeprecated(st, cp, creds)
	member.Config, member.From = creds.cfg, creds.source
	if creds.secret != nil {
		member.Related = creds.secret
	}
	res := p.engine.Engage(ctx, key, member)
	p.setIdentity(key, st, cp)
	return res
}

// unready handles a selected profile that is not ready: an engaged cluster is kept for the grace
// period and disengaged after it; nothing is engaged.
func (p *Provider) unready(key types.NamespacedName, cp *v1alpha1.ClusterProfile) kit.Result {
	name := ClusterName(key.Namespace, key.Name)
	if !p.engine.IsEngaged(name) {
		p.disengage(key, cp, "the ClusterProfile is not ready")
		return kit.Result{}
	}
	grace := p.opts.UnreadyGracePeriod
	st := p.state(key)
	if p.setUnready(st, true) && grace > 0 {
		p.engine.Logger().Info("ClusterProfile is not ready; disengaging the cluster unless it is ready again within the grace period",
			"cluster", name, "gracePeriod", grace)
		p.engine.Record(cp, nil, corev1.EventTypeNormal, ReasonClusterUnready,
			fmt.Sprintf("ClusterProfile not ready; the cluster is disengaged unless it is ready again within %s", grace))
	}
	if left := grace - time.Since(st.unreadySince); left > 0 {
		return kit.Result{After: left}
	}
	p.disengage(key, cp, fmt.Sprintf("the ClusterProfile is not ready (for longer than the grace period of %s)", grace))
	return kit.Result{}
}

// setUnready records whether the engaged cluster of st's profile is unready and reports whether
// that changed, keeping UnreadyEngagedClusters in step.
func (p *Provider) setUnready(st *profileState, unready bool) (changed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case unready && st.unreadySince.IsZero():
		st.unreadySince = time.Now()
		UnreadyEngagedClusters.Inc()
		return true
	case !unready && !st.unreadySince.IsZero():
		st.unreadySince = time.Time{}
		UnreadyEngagedClusters.Dec()
		return true
	}
	return false
}

// setIdentity records the identity cp reports while its cluster is engaged, and forgets it
// while none is.
func (p *Provider) setIdentity(key types.NamespacedName, st *profileState, cp *v1alpha1.ClusterProfile) {
	var id *Identity
	if p.engine.IsEngaged(ClusterName(key.Namespace, key.Name)) {
		reported := IdentityOf(cp)
		id = &reported
	}
	p.mu.Lock()
	st.identity = id
	p.mu.Unlock()
}

// warnDeprecated records, once per profile and provider, that the access provider came from the
// deprecated status.credentialProviders.
func (p *Provider) warnDeprecated(st *profileState, cp *v1alpha1.ClusterProfile, creds *credentials) {
	if !creds.deprecated {
		st.deprecatedWarned = ""
		return
	}
	if st.deprecatedWarned == creds.source {
		return
	}
	st.deprecatedWarned = creds.source
	msg := fmt.Sprintf("the ClusterProfile lists %s in the deprecated status.credentialProviders; the cluster manager should list it in status.accessProviders", creds.source)
	p.engine.Logger().Info("Using a deprecated field: "+msg, "cluster", ClusterName(cp.Namespace, cp.Name))
	p.engine.Record(cp, nil, corev1.EventTypeWarning, ReasonDeprecatedCredentialProviders, msg)
}

// disengage removes the cluster of a profile that exists but must not be engaged. regarding,
// when not nil, gets a Normal Event if a cluster was engaged.
func (p *Provider) disengage(key types.NamespacedName, regarding client.Object, why string) {
	st := p.state(key)
	p.setUnready(st, false)
	p.mu.Lock()
	st.identity = nil
	p.mu.Unlock()
	p.engine.Disengage(ClusterName(key.Namespace, key.Name), regarding, why)
}

// forget disengages the cluster of a profile that is gone and drops what the provider knew.
func (p *Provider) forget(key types.NamespacedName, why string) {
	p.mu.Lock()
	st, ok := p.profiles[key]
	delete(p.profiles, key)
	p.mu.Unlock()
	if ok {
		p.setUnready(st, false)
	}
	p.engine.Disengage(ClusterName(key.Namespace, key.Name), nil, why)
}
