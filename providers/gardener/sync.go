// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package gardener

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"sigs.k8s.io/controller-runtime/pkg/client"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"mcr.dev/core/providers/kit"
)

// shootCredentials is what the provider keeps of the admin credentials of one Shoot
// (TopologyGarden).
type shootCredentials struct {
	// latest are the credentials obtained last; they may be newer than the engaged ones when
	// engaging with them failed.
	latest *adminCredentials
	// engagedExpires is when the credentials of the engaged instance expire; zero when the
	// provider engaged none.
	engagedExpires time.Time
}

// credentials returns the admin credentials kept for the Shoot key, creating the entry.
func (p *Provider) credentials(key types.NamespacedName) *shootCredentials {
	p.mu.Lock()
	defer p.mu.Unlock()
	sc, ok := p.creds[key]
	if !ok {
		sc = &shootCredentials{}
		p.creds[key] = sc
	}
	return sc
}

// disengage disengages the cluster of key and forgets its credentials, so that it is engaged
// again with fresh ones. regarding, when not nil, gets a Normal Event if a cluster was engaged.
func (p *Provider) disengage(key types.NamespacedName, regarding client.Object, why string) {
	p.mu.Lock()
	delete(p.creds, key)
	p.mu.Unlock()
	p.engine.Disengage(clusterName(key), regarding, why)
}

// syncShoot brings the engagement of one Shoot in line with the Shoot and its admin
// credentials (TopologyGarden).
func (p *Provider) syncShoot(ctx context.Context, key types.NamespacedName) kit.Result {
	name := clusterName(key)
	shoot := &gardencorev1beta1.Shoot{}
	if res, ok := p.engine.GetHostObject(ctx, p.host.GetCache(), key, shoot, name, func() kit.Result {
		p.disengage(key, nil, "the Shoot is gone")
		return kit.Result{}
	}); !ok {
		return res
	}
	if shoot.DeletionTimestamp != nil {
		p.disengage(key, nil, "the Shoot is being deleted")
		return kit.Result{}
	}
	if why := p.notEngaged(ctx, shoot); why != "" {
		p.disengage(key, shoot, why)
		return kit.Result{}
	}

	member := kit.Member{Name: name, Regarding: shoot, From: "admin credentials of shoots/" + AdminKubeconfigSubresource}
	sc := p.credentials(key)
	now := time.Now()
	if !sc.engagedExpires.IsZero() && !now.Before(sc.engagedExpires) && p.engine.IsEngaged(name) {
		// It cannot talk to the shoot any more anyway.
		p.disengageExpired(key, shoot, sc.engagedExpires)
		sc = p.credentials(key)
	}
	if sc.latest == nil || sc.latest.epoch != credentialsEpoch(shoot) || !now.Before(sc.latest.renewAt) {
		creds, err := p.requestAdminKubeconfig(ctx, shoot)
		if err != nil {
			if ctx.Err() != nil {
				return kit.Result{}
			}
			p.syncAtExpiry(key, sc)
			return p.engine.Fail(key, member, kit.Retryable(ReasonAdminKubeconfigFailed, err))
		}
		sc.latest = creds
		p.engine.Logger().V(1).Info("Obtained admin credentials", "cluster", name,
			"expires", creds.expires.UTC().Format(time.RFC3339), "renewAt", creds.renewAt.UTC().Format(time.RFC3339))
	}
	// Renewal is due at renewAt whether or not anything about the Shoot changes.
	p.engine.AddAfter(key, time.Until(sc.latest.renewAt))

	cfg, err := p.loadKubeconfig(sc.latest.kubeconfig)
	if err != nil {
		// Not retried: the next credentials, at renewAt, are.
		return p.engine.Fail(key, member, kit.Permanent(kit.ReasonInvalidKubeconfig, fmt.Errorf("%s: %w", member.From, err)))
	}
	member.Config = cfg
	res, engaged := p.engage(ctx, key, member)
	switch {
	case engaged:
		sc.engagedExpires = sc.latest.expires
	case res.Reason == kit.ReasonUnauthorized:
		// Freshly issued credentials that the shoot refuses are not worth trying again: the
		// retry asks for new ones.
		sc.latest = nil
		fallthrough
	case res.Retry:
		p.syncAtExpiry(key, sc)
	}
	return res
}

// syncAtExpiry makes sure the Shoot key is synced when the credentials of its engaged instance
// expire, even when its backoff is longer, so that it is disengaged then.
func (p *Provider) syncAtExpiry(key types.NamespacedName, sc *shootCredentials) {
	if !sc.engagedExpires.IsZero() && p.engine.IsEngaged(clusterName(key)) {
		p.engine.AddAfter(key, time.Until(sc.engagedExpires))
	}
}

// disengageExpired removes an engaged cluster whose admin credentials expired before new ones
// could be engaged, with a Warning on the Shoot.
func (p *Provider) disengageExpired(key types.NamespacedName, shoot *gardencorev1beta1.Shoot, expired time.Time) {
	p.disengage(key, nil, "its admin credentials expired and could not be renewed")
	p.engine.Record(shoot, nil, corev1.EventTypeWarning, ReasonCredentialsExpired,
		"Cluster disengaged: its admin credentials expired at "+expired.UTC().Format(time.RFC3339)+" and could not be renewed in time")
}

// syncSeedCluster brings the engagement of one extensions Cluster object in line with the
// object and the "gardener" Secret in its namespace (TopologySeed).
func (p *Provider) syncSeedCluster(ctx context.Context, key types.NamespacedName) kit.Result {
	name := clusterName(key)
	obj := &extensionsv1alpha1.Cluster{}
	if res, ok := p.engine.GetHostObject(ctx, p.host.GetCache(), key, obj, name, func() kit.Result {
		p.disengage(key, nil, "the Cluster object is gone")
		return kit.Result{}
	}); !ok {
		return res
	}
	if obj.DeletionTimestamp != nil {
		p.disengage(key, nil, "the Cluster object is being deleted")
		return kit.Result{}
	}
	member := kit.Member{Name: name, Regarding: obj}
	shoot, err := ShootOfCluster(obj)
	if err != nil {
		// An engaged cluster stays engaged: gardenlet rewrites the object on its next
		// reconciliation, and deleting it is what disengages.
		return p.engine.Fail(key, member, kit.Permanent(ReasonInvalidCluster, fmt.Errorf("the Cluster object %s: %w", key.Name, err)))
	}
	if why := p.notEngaged(ctx, shoot); why != "" {
		p.disengage(key, obj, why)
		return kit.Result{}
	}

	secretKey := types.NamespacedName{Namespace: key.Name, Name: SeedSecretName}
	secret := &corev1.Secret{}
	if res, ok := p.engine.GetHostObject(ctx, p.host.GetCache(), secretKey, secret, name, func() kit.Result {
		// An engaged cluster keeps its working credentials: gardenlet recreates the Secret.
		return p.engine.Fail(key, member, kit.Permanent(ReasonKubeconfigSecretMissing,
			fmt.Errorf("the Secret %s was not found in the shoot's control-plane namespace", secretKey)))
	}); !ok {
		return res
	}
	member.Related, member.From = secret, "Secret "+secretKey.String()
	data := secret.Data[SeedKubeconfigKey]
	if len(data) == 0 {
		return p.engine.Fail(key, member, kit.WithMetricReason(kit.Permanent(kit.ReasonInvalidKubeconfig,
			fmt.Errorf("the Secret %s has no data under key %q", secretKey, SeedKubeconfigKey)), reasonMissingData))
	}
	cfg, err := p.loadKubeconfig(data)
	switch {
	case errors.Is(err, errNoCredentials):
		// The normal state of a new control plane until gardener-resource-manager has written
		// the token: the Secret's next update brings it.
		p.engine.Logger().Info("Waiting for the token in the kubeconfig", "cluster", name, "source", member.From)
		return kit.Result{}
	case err != nil:
		return p.engine.Fail(key, member, kit.Permanent(kit.ReasonInvalidKubeconfig, fmt.Errorf("%s: %w", member.From, err)))
	}
	member.Config = cfg
	res, _ := p.engage(ctx, key, member)
	return res
}

// engage engages m and reports whether an instance with m's config became the engaged one
// (none was engaged, or one with other credentials), counting credential rotations.
func (p *Provider) engage(ctx context.Context, key types.NamespacedName, m kit.Member) (kit.Result, bool) {
	before, _ := p.GetTyped(ctx, m.Name)
	res := p.engine.Engage(ctx, key, m)
	after, err := p.GetTyped(ctx, m.Name)
	if err != nil || after == before {
		return res, false
	}
	if before != nil {
		CredentialRotations.Inc()
	}
	return res, true
}
