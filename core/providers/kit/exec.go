// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kit

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/client-go/rest"

	"mcr.dev/core/internal/execplugin"
	"mcr.dev/core/multicluster"
)

// execConfig returns cfg with its exec plugin, if any, replaced by a source the Engine owns
// (execplugin.Config): the source lives until the provider stops or closeSource, whichever
// comes first.
func (e *Engine[K]) execConfig(name multicluster.ClusterName, cfg *rest.Config) (*rest.Config, *execplugin.Source, error) {
	if cfg.ExecProvider == nil {
		return cfg, nil, nil
	}
	e.mu.Lock()
	ctx := e.runCtx
	e.mu.Unlock()
	if ctx == nil {
		ctx = context.Background()
	}
	built, src, err := execplugin.Config(ctx, cfg, execplugin.Options{
		Member:    string(name),
		Timeout:   e.opts.Options.ExecTimeout,
		MaxOutput: e.opts.Options.ExecMaxOutput,
	})
	if err != nil || src == nil {
		return built, nil, err
	}
	e.mu.Lock()
	if e.sources == nil {
		e.sources = map[*execplugin.Source]struct{}{}
	}
	e.sources[src] = struct{}{}
	e.mu.Unlock()
	return built, src, nil
}

// firstCredential runs the member's plugin before anything else asks the member, within
// Options.CacheSyncTimeout, so that a plugin that fails is reported as such rather than as a
// member that does not answer.
func (e *Engine[K]) firstCredential(ctx context.Context, name multicluster.ClusterName, src *execplugin.Source) error {
	if src == nil {
		return nil
	}
	limit := e.opts.Options.CacheSyncTimeout
	wait, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	_, err := src.Get(wait)
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("exec credential plugin %q of member %q did not answer within %s (Options.CacheSyncTimeout)", src.Command(), name, limit)
	}
	return err
}

// closeSource stops src (killing its plugin if it runs) and forgets it; nil is a no-op.
func (e *Engine[K]) closeSource(src *execplugin.Source) {
	if src == nil {
		return
	}
	src.Close()
	e.mu.Lock()
	delete(e.sources, src)
	e.mu.Unlock()
}

// closeSources stops every source, as the provider stops: Run returns only once no plugin of
// its members runs.
func (e *Engine[K]) closeSources() {
	e.mu.Lock()
	sources := e.sources
	e.sources = nil
	e.mu.Unlock()
	for src := range sources {
		src.Close()
	}
}

// withFrom says where the member's plugin comes from (Member.From), when the provider said.
func withFrom(m Member, err error) error {
	if m.From == "" {
		return err
	}
	return fmt.Errorf("%s: %w", m.From, err)
}
