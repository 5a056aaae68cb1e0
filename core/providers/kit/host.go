// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
)

// HostRun ties a provider's Start to the host cluster the provider built itself: the host runs
// as long as Start, and Start ends with an error when the host stops first.
type HostRun struct {
	ctx        context.Context
	cancel     context.CancelCauseFunc
	wg         sync.WaitGroup
	errStopped error
}

// RunHost starts host in the background, unless it is nil (a host its owner runs, such as the
// manager's own cluster), and returns the run. provider names the provider in errors, e.g.
// "clusterapi provider". Call Stop when Start returns.
func RunHost(ctx context.Context, provider string, host cluster.Cluster) *HostRun {
	h := &HostRun{errStopped: errors.New(provider + ": the host cluster stopped")}
	h.ctx, h.cancel = context.WithCancelCause(ctx)
	if host != nil {
		h.wg.Go(func() {
			err := host.Start(h.ctx)
			if h.ctx.Err() == nil {
				h.cancel(Redact(fmt.Errorf("%w: %v", h.errStopped, err)))
			}
		})
	}
	return h
}

// Context is the context Start runs under: it ends when Start's own context ends or the host
// stops.
func (h *HostRun) Context() context.Context { return h.ctx }

// Err returns, once Context has ended, what Start returns: nil when Start's own context ended,
// an error naming the provider and the host's error when the host stopped first.
func (h *HostRun) Err() error {
	if cause := context.Cause(h.ctx); errors.Is(cause, h.errStopped) {
		return cause
	}
	return nil
}

// Stop ends Context and waits for the host to stop.
func (h *HostRun) Stop() {
	h.cancel(nil)
	h.wg.Wait()
}

// NewHost builds the host cluster of a provider that runs its own (a New, as opposed to a
// NewForHost that shares one the caller runs): own, the provider's settings (scheme, a cache
// restricted to what it watches), applies first, then the user's extra options (the provider's
// HostClusterOptions); the host's logger is logger named "host". name is the provider's name,
// e.g. "clusterapi-provider", for errors. Pass the host as EngineOptions.Host with RunHost.
func NewHost(name string, cfg *rest.Config, logger logr.Logger, own func(*cluster.Options), extra ...cluster.Option) (cluster.Cluster, error) {
	prefix := strings.ReplaceAll(name, "-", " ")
	if cfg == nil {
		return nil, errors.New(prefix + ": host config is nil")
	}
	opts := append([]cluster.Option{func(o *cluster.Options) {
		o.Logger = logger.WithName("host")
		if own != nil {
			own(o)
		}
	}}, extra...)
	host, err := cluster.New(cfg, opts...)
	if err != nil {
		return nil, Redact(fmt.Errorf("%s: creating the host cluster: %w", prefix, err))
	}
	return host, nil
}

// CacheNamespaces returns the cache.Options.DefaultNamespaces that hold exactly namespaces, for a
// provider whose Options.Namespaces restrict what it watches; nil (every namespace) when there
// are none.
func CacheNamespaces(namespaces []string) map[string]cache.Config {
	if len(namespaces) == 0 {
		return nil
	}
	out := make(map[string]cache.Config, len(namespaces))
	for _, ns := range namespaces {
		out[ns] = cache.Config{}
	}
	return out
}
