// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package hostrun

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/redact"
)

// Run ties a provider's Start to the host cluster the provider built itself: the host runs
// as long as Start, and Start ends with an error when the host stops first.
type Run struct {
	ctx        context.Context
	cancel     context.CancelCauseFunc
	wg         sync.WaitGroup
	errStopped error
}

// Start starts host in the background, unless it is nil (a host its owner runs, such as the
// manager's own cluster), and returns the run. provider names the provider in errors, e.g.
// "clusterapi provider". Call Stop when Start returns.
func Start(ctx context.Context, provider string, host cluster.Cluster) *Run {
	h := &Run{errStopped: errors.New(provider + ": the host cluster stopped")}
	h.ctx, h.cancel = context.WithCancelCause(ctx)
	if host != nil {
		h.wg.Go(func() {
			err := host.Start(h.ctx)
			if h.ctx.Err() == nil {
				h.cancel(redact.Error(fmt.Errorf("%w: %v", h.errStopped, err)))
			}
		})
	}
	return h
}

// Context is the context Start runs under: it ends when Start's own context ends or the host
// stops.
func (h *Run) Context() context.Context { return h.ctx }

// Err returns, once Context has ended, what Start returns: nil when Start's own context ended,
// an error naming the provider and the host's error when the host stopped first.
func (h *Run) Err() error {
	if cause := context.Cause(h.ctx); errors.Is(cause, h.errStopped) {
		return cause
	}
	return nil
}

// Stop ends Context and waits for the host to stop.
func (h *Run) Stop() {
	h.cancel(nil)
	h.wg.Wait()
}
