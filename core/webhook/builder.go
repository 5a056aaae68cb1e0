// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package webhook

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
)

// Builder builds a Webhook for objects of type T and registers it with a manager. Start it
// with ManagedBy, give it exactly one of WithValidator, WithDefaulter and WithHandler, and
// finish with Complete.
type Builder[T runtime.Object] struct {
	mgr           mcmanager.Manager
	obj           T
	validator     Validator[T]
	defaulter     Defaulter[T]
	defaulterOpts []admission.DefaulterOption
	handler       admission.Handler
	opts          Options
}

// ManagedBy starts building a webhook for objects like obj, served by mgr's webhook server for
// every cluster mgr engages.
func ManagedBy[T runtime.Object](mgr mcmanager.Manager, obj T) *Builder[T] {
	return &Builder[T]{mgr: mgr, obj: obj}
}

// WithValidator serves v: a validating webhook, at /validate-<group>-<version>-<kind> unless
// Options.Path says otherwise.
func (b *Builder[T]) WithValidator(v Validator[T]) *Builder[T] {
	b.validator = v
	return b
}

// WithDefaulter serves d: a mutating webhook, at /mutate-<group>-<version>-<kind> unless
// Options.Path says otherwise. opts are controller-runtime's defaulter options.
func (b *Builder[T]) WithDefaulter(d Defaulter[T], opts ...admission.DefaulterOption) *Builder[T] {
	b.defaulter, b.defaulterOpts = d, opts
	return b
}

// WithHandler serves a raw admission handler, which finds its cluster in the context
// (mccontext.ClusterFrom, mccontext.ClusterObjectFrom), at /admit-<group>-<version>-<kind>
// unless Options.Path says otherwise.
func (b *Builder[T]) WithHandler(h admission.Handler) *Builder[T] {
	b.handler = h
	return b
}

// WithOptions sets the webhook's options. Path defaults as the With* methods say, and Lookup
// to the manager's provider.
func (b *Builder[T]) WithOptions(opts Options) *Builder[T] {
	b.opts = opts
	return b
}

// Complete builds the webhook, registers it with the manager's webhook server (at its path and,
// with per-cluster paths, every path under it) and adds it to the manager, which engages it
// with every cluster it engages, present and future.
func (b *Builder[T]) Complete() (*Webhook, error) {
	if b.mgr == nil {
		return nil, errors.New("webhook: ManagedBy needs a manager")
	}
	set := 0
	for _, isSet := range []bool{b.validator != nil, b.defaulter != nil, b.handler != nil} {
		if isSet {
			set++
		}
	}
	if set != 1 {
		return nil, errors.New("webhook: give the builder exactly one of WithValidator, WithDefaulter and WithHandler " +
			"(build a second webhook for a second one)")
	}
	scheme := b.mgr.GetLocalManager().GetScheme()
	handler, prefix := b.handler, "admit"
	switch {
	case b.validator != nil:
		handler, prefix = ValidatorHandler(scheme, b.validator), "validate"
	case b.defaulter != nil:
		handler, prefix = DefaulterHandler(scheme, b.defaulter, b.defaulterOpts...), "mutate"
	}
	opts := b.opts
	if opts.Path == "" {
		gvk, err := apiutil.GVKForObject(b.obj, scheme)
		if err != nil {
			return nil, fmt.Errorf("webhook: naming the path of %T: %w", b.obj, err)
		}
		opts.Path = "/" + prefix + "-" + strings.ReplaceAll(gvk.Group, ".", "-") + "-" + gvk.Version + "-" + strings.ToLower(gvk.Kind)
	}
	if opts.Lookup == nil {
		if provider := b.mgr.GetProvider(); provider != nil {
			opts.Lookup = provider.Get
		}
	}
	w, err := New(handler, opts)
	if err != nil {
		return nil, err
	}
	if err := Register(b.mgr, w); err != nil {
		return nil, err
	}
	return w, nil
}

// Register serves w on mgr's webhook server, at its path and, with per-cluster paths, every
// path under it, and adds it to mgr, which engages it with every cluster it engages. The
// builder calls it; call it for a Webhook made with New. Like the webhook server's Register, it
// panics when a path is registered twice: give a second webhook of the same type its own
// Options.Path.
func Register(mgr mcmanager.Manager, w *Webhook) error {
	server := mgr.GetWebhookServer()
	server.Register(w.Path(), w)
	if w.PerClusterPaths() {
		server.Register(w.Path()+"/", w)
	}
	if err := mgr.Add(engaged{w}); err != nil {
		return fmt.Errorf("webhook %s: adding it to the manager: %w", w.Path(), err)
	}
	return nil
}

// engaged makes a Webhook a manager runnable, so that the manager engages it with its
// clusters; the webhook server serves it, so there is nothing to run.
type engaged struct{ w *Webhook }

func (e engaged) Engage(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster) error {
	return e.w.Engage(ctx, name, cl)
}

func (engaged) Start(ctx context.Context) error {
	<-ctx.Done()
	return nil
}

// NeedLeaderElection is false: every replica serves admission requests.
func (engaged) NeedLeaderElection() bool { return false }
