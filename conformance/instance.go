// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/multicluster"
)

// instance is one provider instance of a test, run directly or under a manager.
type instance struct {
	s        *spec
	provider multicluster.Provider
	probe    *probe
	mgr      Manager // nil in ModeDirect

	// cancelHarness ends the context given to Harness.NewProvider, after Start returned.
	cancelHarness context.CancelFunc

	mu        sync.Mutex
	cancelRun context.CancelFunc // nil until started
	done      chan struct{}      // closed when Start (or the manager's Start) returned
	startErr  error
	stopped   bool
}

// newInstance asks the harness for a new provider and prepares, but does not start, it. The
// instance is stopped when the test ends.
func (s *spec) newInstance() *instance {
	hctx, cancelHarness := context.WithCancel(context.WithoutCancel(s.ctx))
	ctx, cancel := s.harnessCtx()
	defer cancel()
	p, err := newProvider(ctx, hctx, s.h)
	if err != nil {
		cancelHarness()
		s.erroredf("harness: NewProvider: %v", err)
	}
	if p == nil {
		cancelHarness()
		s.erroredf("harness: NewProvider returned a nil provider")
	}
	in := &instance{s: s, provider: p, probe: newProbe(), cancelHarness: cancelHarness, done: make(chan struct{})}
	in.probe.onEngage = func() { s.run.engagedAny.Store(true) }
	s.deferCleanup(func() error {
		defer cancelHarness()
		return in.stop()
	})
	if s.opts.Mode == ModeManager {
		if s.opts.ManagerConfig == nil {
			s.erroredf("Options.Mode is %q but Options.ManagerConfig is nil", ModeManager)
		}
		mgr, err := s.opts.NewManager(s.opts.ManagerConfig, p, in.probe)
		if err != nil {
			s.erroredf("Options.NewManager: %v", err)
		}
		if mgr == nil {
			s.erroredf("Options.NewManager returned a nil manager")
		}
		s.run.noteManager(mgr)
		in.mgr = mgr
	}
	return in
}

// newProvider calls Harness.NewProvider; the harness's ctx is hctx, bounded by ctx only while
// the call runs.
func newProvider(ctx, hctx context.Context, h Harness) (multicluster.Provider, error) {
	type result struct {
		p   multicluster.Provider
		err error
	}
	ch := make(chan result, 1)
	go func() {
		p, err := h.NewProvider(hctx)
		ch <- result{p, err}
	}()
	select {
	case r := <-ch:
		return r.p, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("NewProvider did not return: %w", ctx.Err())
	}
}

// start starts a fresh instance; see spec.start.
func (s *spec) start() *instance {
	in := s.newInstance()
	in.start()
	return in
}

// start runs the provider: Start(ctx, probe) in ModeDirect, the manager in ModeManager.
func (in *instance) start() {
	s := in.s
	runCtx, cancel := context.WithCancel(context.WithoutCancel(s.ctx))
	in.mu.Lock()
	in.cancelRun = cancel
	in.mu.Unlock()
	var run func() error
	if in.mgr != nil {
		run = func() error { return in.mgr.Start(runCtx) }
	} else {
		runnable, ok := in.provider.(multicluster.ProviderRunnable)
		if !ok {
			cancel()
			close(in.done)
			s.erroredf("the provider (%T) is not a multicluster.ProviderRunnable: the suite cannot start it", in.provider)
		}
		run = func() error { return runnable.Start(runCtx, in.probe) }
	}
	go func() {
		defer close(in.done)
		err := func() (err error) {
			defer func() {
				if p := recover(); p != nil {
					err = fmt.Errorf("Start panicked: %v", p)
				}
			}()
			return run()
		}()
		in.mu.Lock()
		in.startErr = err
		in.mu.Unlock()
	}()
}

// startState describes whether Start is still running, for failure messages.
func (in *instance) startState() string {
	select {
	case <-in.done:
		in.mu.Lock()
		defer in.mu.Unlock()
		if in.cancelRun == nil {
			return "the provider was never started"
		}
		return fmt.Sprintf("the provider's Start returned early: %v", in.startErr)
	default:
		return "the provider's Start is running"
	}
}

// stop ends the provider's context and waits up to Timeouts.Stop for Start to return. It
// returns Start's error, or an error saying Start did not return.
func (in *instance) stop() error {
	in.mu.Lock()
	cancel := in.cancelRun
	already := in.stopped
	in.stopped = true
	in.mu.Unlock()
	if cancel == nil || already {
		return nil
	}
	in.probe.stopping.Store(true)
	cancel()
	timer := time.NewTimer(in.s.opts.Timeouts.Stop)
	defer timer.Stop()
	select {
	case <-in.done:
		in.mu.Lock()
		defer in.mu.Unlock()
		return in.startErr
	case <-timer.C:
		return fmt.Errorf("the provider's Start did not return within %s after its context ended", in.s.opts.Timeouts.Stop)
	}
}

// get calls Get the way a controller would: Manager.GetCluster in ModeManager, Provider.Get
// otherwise. A panic becomes an error.
func (in *instance) get(ctx context.Context, name multicluster.ClusterName) (cl cluster.Cluster, err error) {
	defer func() {
		if p := recover(); p != nil {
			cl, err = nil, fmt.Errorf("Get(%q) panicked: %v", name, p)
		}
	}()
	if in.mgr != nil {
		return in.mgr.GetCluster(ctx, name)
	}
	return in.provider.Get(ctx, name)
}

// indexField calls IndexField through the manager's fleet indexer in ModeManager, on the
// provider otherwise.
func (in *instance) indexField(ctx context.Context, obj client.Object, field string, fn client.IndexerFunc) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("IndexField(%q) panicked: %v", field, p)
		}
	}()
	if in.mgr != nil {
		return in.mgr.GetFieldIndexer().IndexField(ctx, obj, field, fn)
	}
	return in.provider.IndexField(ctx, obj, field, fn)
}

// stopped reports whether a Start error is the normal end of a stopped provider.
func isCleanStopError(err error) bool {
	return err == nil || errors.Is(err, context.Canceled)
}
