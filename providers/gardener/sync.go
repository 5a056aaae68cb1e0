package gardener

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"mcr.dev/core/clusters"
	"mcr.dev/core/kubeconfig"
)

// state returns the remembered state of an object, creating it.
func (p *Provider) state(key types.NamespacedName) *memberState {
	p.mu.Lock()
	defer p.mu.Unlock()
	st, ok := p.states[key]
	if !ok {
		st = &memberState{}
		p.states[key] = st
	}
	return st
}

// isEngaged reports whether the instance engaged for st is still the engaged one (it is not
// when its cache stopped on its own, or it was removed).
func (p *Provider) isEngaged(ctx context.Context, key types.NamespacedName, st *memberState) bool {
	if st.engaged == nil {
		return false
	}
	cl, err := p.GetTyped(ctx, clusterName(key))
	return err == nil && cl == st.engaged
}

// syncShoot brings the engagement of one Shoot in line with the Shoot and its admin
// credentials (TopologyGarden). It returns true when the failure is transient and the Shoot
// should be retried with backoff.
func (p *Provider) syncShoot(ctx context.Context, key types.NamespacedName) (retry bool) {
	log := p.log.WithValues("cluster", clusterName(key))

	shoot := &gardencorev1beta1.Shoot{}
	if err := p.host.GetCache().Get(ctx, key, shoot); err != nil {
		if apierrors.IsNotFound(err) {
			p.forget(key, log, "the Shoot is gone")
			return false
		}
		log.Error(err, "Reading the Shoot from the garden cache")
		return true
	}
	st := p.state(key)
	switch {
	case shoot.DeletionTimestamp != nil:
		p.disengage(ctx, key, st, nil, log, "the Shoot is being deleted")
		return false
	case !p.selects(ctx, shoot):
		p.disengage(ctx, key, st, shoot, log, "the Shoot is not selected by the provider's options")
		return false
	case !p.opts.IsUsable(ctx, shoot):
		p.disengage(ctx, key, st, shoot, log, p.unusable(shoot))
		return false
	}

	now := time.Now()
	if st.creds == nil || st.creds.epoch != credentialsEpoch(shoot) || !now.Before(st.creds.renewAt) {
		creds, err := p.requestAdminKubeconfig(ctx, shoot)
		if err != nil {
			if ctx.Err() != nil {
				return false
			}
			if st.engaged != nil && !st.expires.IsZero() {
				if !now.Before(st.expires) {
					p.disengageExpired(ctx, key, st, shoot, log, err)
				} else {
					// Make sure a sync happens at expiry even when the backoff is longer.
					p.loop.AddAfter(key, time.Until(st.expires))
				}
			}
			p.problems.Report(&st.problem, log, shoot, nil, ReasonAdminKubeconfigFailed, ReasonAdminKubeconfigFailed, err)
			return true
		}
		st.creds = creds
		log.V(1).Info("Obtained admin credentials", "expires", creds.expires.UTC().Format(time.RFC3339), "renewAt", creds.renewAt.UTC().Format(time.RFC3339))
	}
	// Renewal is due at renewAt whether or not anything about the Shoot changes.
	p.loop.AddAfter(key, time.Until(st.creds.renewAt))
	retry, err := p.engage(ctx, key, st, shoot, nil, st.creds.kubeconfig, st.creds.hash, st.creds.expires,
		"admin credentials of shoots/"+AdminKubeconfigSubresource, log)
	if errors.Is(err, errUnauthorized) {
		// Freshly issued credentials that the shoot refuses are not worth trying again.
		st.creds = nil
	}
	if retry && st.engaged != nil && !st.expires.IsZero() && !time.Now().Before(st.expires) {
		// The new credentials could not be engaged and the old ones are dead.
		p.disengageExpired(ctx, key, st, shoot, log, err)
	}
	return retry
}

// syncSeedCluster brings the engagement of one extensions Cluster object in line with the
// object and the "gardener" Secret in its namespace (TopologySeed). It returns true when the
// failure is transient and the object should be retried with backoff.
func (p *Provider) syncSeedCluster(ctx context.Context, key types.NamespacedName) (retry bool) {
	log := p.log.WithValues("cluster", clusterName(key))

	obj := &extensionsv1alpha1.Cluster{}
	if err := p.host.GetCache().Get(ctx, key, obj); err != nil {
		if apierrors.IsNotFound(err) {
			p.forget(key, log, "the Cluster object is gone")
			return false
		}
		log.Error(err, "Reading the Cluster object from the seed cache")
		return true
	}
	st := p.state(key)
	if obj.DeletionTimestamp != nil {
		p.disengage(ctx, key, st, nil, log, "the Cluster object is being deleted")
		return false
	}
	shoot, err := ShootOfCluster(obj)
	if err != nil {
		// An engaged cluster stays engaged: gardenlet rewrites the object on its next
		// reconciliation, and deleting it is what disengages.
		p.problems.Report(&st.problem, log, obj, nil, ReasonInvalidCluster, ReasonInvalidCluster, fmt.Errorf("the Cluster object %s: %w", key.Name, err))
		return false
	}
	switch {
	case !p.selects(ctx, shoot):
		p.disengage(ctx, key, st, obj, log, "the Shoot is not selected by the provider's options")
		return false
	case !p.opts.IsUsable(ctx, shoot):
		p.disengage(ctx, key, st, obj, log, p.unusable(shoot))
		return false
	}

	secretKey := types.NamespacedName{Namespace: key.Name, Name: SeedSecretName}
	secret := &corev1.Secret{}
	if err := p.host.GetCache().Get(ctx, secretKey, secret); err != nil {
		if !apierrors.IsNotFound(err) {
			log.Error(err, "Reading the kubeconfig Secret from the seed cache", "secret", secretKey)
			return true
		}
		// An engaged cluster keeps its working credentials: gardenlet recreates the Secret.
		p.problems.Report(&st.problem, log, obj, nil, ReasonKubeconfigSecretMissing, ReasonKubeconfigSecretMissing,
			fmt.Errorf("the Secret %s was not found in the shoot's control-plane namespace", secretKey))
		return false
	}
	data := secret.Data[SeedKubeconfigKey]
	if len(data) == 0 {
		p.problems.Report(&st.problem, log, obj, secret, ReasonInvalidKubeconfig, reasonMissingData,
			fmt.Errorf("the Secret %s has no data under key %q", secretKey, SeedKubeconfigKey))
		return false
	}
	retry, _ = p.engage(ctx, key, st, obj, secret, data, kubeconfig.Hash(data), time.Time{}, "Secret "+secretKey.String(), log)
	return retry
}

// engage engages, or engages again, the cluster of key with the kubeconfig data (content hash
// hash) taken from source, unless the engaged instance already uses it. obj is the object
// Events are recorded on, related the Secret the kubeconfig came from (or nil). It returns
// whether to retry with backoff and the error that made it fail, if any.
func (p *Provider) engage(ctx context.Context, key types.NamespacedName, st *memberState, obj client.Object, related *corev1.Secret,
	data []byte, hash string, expires time.Time, source string, log logr.Logger) (retry bool, err error) {
	name := clusterName(key)
	engaged := p.isEngaged(ctx, key, st)
	if engaged && st.hash == hash {
		st.expires = expires
		p.problems.Resolve(&st.problem, log)
		return false, nil
	}
	if st.rejected == hash {
		return false, nil
	}

	cfg, err := p.restConfig(data)
	if err != nil {
		st.rejected = hash
		if errors.Is(err, errNoCredentials) && p.opts.Topology == TopologySeed {
			// The normal state of a new control plane until gardener-resource-manager has
			// written the token: the Secret's next update brings it.
			log.Info("Waiting for the token in the kubeconfig", "source", source)
			return false, err
		}
		reason := kubeconfig.Reason(err)
		if reason == "" {
			reason = ReasonInvalidKubeconfig
		}
		p.problems.Report(&st.problem, log, obj, related, ReasonInvalidKubeconfig, reason, fmt.Errorf("%s: %w", source, err))
		return false, err
	}
	cl, err := cluster.New(cfg, p.opts.ClusterOptions...)
	if err != nil {
		st.rejected = hash
		p.problems.Report(&st.problem, log, obj, related, ReasonInvalidKubeconfig, ReasonInvalidKubeconfig, fmt.Errorf("%s: creating the cluster: %w", source, err))
		return false, err
	}
	st.rejected = ""

	checkCtx, cancel := context.WithTimeout(ctx, p.opts.CacheSyncTimeout)
	err = checkAccess(checkCtx, cl)
	cancel()
	if err != nil {
		cl.GetHTTPClient().CloseIdleConnections()
		if ctx.Err() != nil {
			return false, err
		}
		reason := ReasonClusterUnreachable
		if errors.Is(err, errUnauthorized) {
			reason = ReasonUnauthorized
		}
		p.problems.Report(&st.problem, log, obj, related, reason, reason, fmt.Errorf("%s: %w", source, err))
		return true, err
	}

	// The engaged cluster lives as long as the provider, never as long as this sync.
	if err := p.AddOrReplace(ctx, name, cl, p.aware); err != nil {
		if ctx.Err() != nil {
			return false, err
		}
		reason := ReasonEngageFailed
		if errors.Is(err, clusters.ErrCacheSyncTimeout) {
			reason = ReasonClusterUnreachable
		}
		p.problems.Report(&st.problem, log, obj, related, reason, reason, err)
		return true, err
	}
	current, err := p.GetTyped(ctx, name)
	if err != nil {
		// Engaged and gone again at once (its cache stopped): the next sync starts over.
		return true, err
	}
	rotated := engaged && current != st.engaged
	st.engaged, st.hash, st.expires = current, hash, expires
	p.problems.Resolve(&st.problem, log)
	switch {
	case rotated:
		CredentialRotations.Inc()
		log.Info("Re-engaged cluster with new credentials", "source", source)
		p.events.Record(obj, related, corev1.EventTypeNormal, ReasonCredentialsRotated, "Cluster engaged again with new "+source)
	case !engaged:
		log.Info("Engaged cluster", "source", source)
		p.events.Record(obj, related, corev1.EventTypeNormal, ReasonClusterEngaged, "Cluster engaged with "+source)
	default:
		// The kubeconfig changed in form only (clusters.EqualConfigs): nothing was replaced.
		log.V(1).Info("Kubeconfig changed without changing credentials or endpoint", "source", source)
	}
	return false, nil
}

// disengage removes the cluster of an object that exists but must not be engaged, and forgets
// its credentials. obj, when not nil, gets a Normal Event if a cluster was engaged.
func (p *Provider) disengage(ctx context.Context, key types.NamespacedName, st *memberState, obj client.Object, log logr.Logger, why string) {
	p.problems.Resolve(&st.problem, log)
	st.rejected, st.creds = "", nil
	wasEngaged := p.isEngaged(ctx, key, st)
	if st.engaged != nil {
		p.Remove(clusterName(key))
		st.engaged, st.hash, st.expires = nil, "", time.Time{}
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

// disengageExpired removes an engaged cluster whose admin credentials expired before new ones
// could be obtained (cause): it could not talk to the shoot any more anyway.
func (p *Provider) disengageExpired(ctx context.Context, key types.NamespacedName, st *memberState, shoot *gardencorev1beta1.Shoot, log logr.Logger, cause error) {
	wasEngaged := p.isEngaged(ctx, key, st)
	p.Remove(clusterName(key))
	st.engaged, st.hash, st.expires, st.creds = nil, "", time.Time{}, nil
	if wasEngaged {
		log.Error(cause, "Disengaged cluster: its admin credentials expired and could not be renewed")
		p.events.Record(shoot, nil, corev1.EventTypeWarning, ReasonCredentialsExpired,
			"Cluster disengaged: its admin credentials expired and could not be renewed: "+cause.Error())
	}
}

// forget disengages the cluster of an object that is gone and drops what the provider knew.
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
		p.Remove(clusterName(key))
		log.Info("Disengaged cluster: " + why)
	}
}
