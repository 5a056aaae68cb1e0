// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kit

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"mcr.dev/core/internal/accesscheck"
	"mcr.dev/core/internal/credswap"
)

// refreshInPlace gives the engaged instance of m the credentials of cfg when nothing but the
// credentials changed (Options.RefreshCredentialsInPlace): the instance, its cache and the
// controllers' queues stay. done is false when the change needs a new instance (another
// endpoint or user, credentials that cannot be swapped in); then the caller engages one.
func (e *Engine[K]) refreshInPlace(ctx context.Context, key K, m Member, st *memberState[K], holder *credswap.Holder, engaged, cfg *rest.Config) (res Result, done bool) {
	if !credswap.SameEndpoint(engaged, cfg) || !credswap.SameIdentity(engaged, cfg) {
		return Result{}, false
	}
	log := e.log.WithValues("cluster", m.Name)
	if !e.opts.Options.SkipAccessCheck {
		// The new credentials must work before they replace those that do.
		checked, err := e.checkConfig(ctx, cfg)
		if !checked {
			// Credentials no client can be built with (a key that does not parse): a new
			// instance reports them as it reports any config it cannot build.
			log.V(1).Info("Credentials cannot be replaced in place; engaging the cluster again", "why", err.Error())
			return Result{}, false
		}
		if err != nil {
			if ctx.Err() != nil {
				return Result{}, true
			}
			reason := ReasonClusterUnreachable
			if errors.Is(err, accesscheck.ErrUnauthorized) {
				reason = ReasonUnauthorized
			}
			return e.Fail(key, m, Retryable(reason, err)), true
		}
	}
	if err := holder.Swap(cfg); err != nil {
		log.V(1).Info("Credentials cannot be replaced in place; engaging the cluster again", "why", err.Error())
		return Result{}, false
	}
	e.mu.Lock()
	st.config = cfg
	e.mu.Unlock()
	e.problems.Resolve(&st.problem, log)
	from := ""
	if m.From != "" {
		from = " from " + m.From
	}
	log.Info("Replaced the credentials of the engaged cluster in place" + from)
	e.events.record(m.Regarding, m.Related, corev1.EventTypeNormal, ReasonCredentialsRotated, "Credentials replaced in place; the cluster stays engaged"+from)
	return Result{}, true
}

// checkConfig runs the access check with cfg's credentials, on a client of its own that is
// closed on return, within Options.CacheSyncTimeout. checked is false when no client could be
// built from cfg; err then says why.
func (e *Engine[K]) checkConfig(ctx context.Context, cfg *rest.Config) (checked bool, err error) {
	probe, holder, err := credswap.Config(cfg)
	if err != nil {
		return false, err
	}
	defer holder.Close()
	hc, err := rest.HTTPClientFor(probe)
	if err != nil {
		return false, err
	}
	return true, e.checkAccess(ctx, probe, hc)
}
