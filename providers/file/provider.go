// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package file

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
)

// Provider engages one cluster per context of the kubeconfig files it watches. Create it with
// New; a multi-cluster manager runs it (Start). IndexField comes from the embedded
// clusters.Clusters.
type Provider struct {
	// Members supplies IndexField, ClusterNames, ListClusters and Start, which runs the engine;
	// Get is the provider's own.
	kit.Members[multicluster.ClusterName]

	opts   Options
	src    sources
	loader loader
	engine *kit.Engine[multicluster.ClusterName]
	// desired holds the usable spec of every context the files name, by cluster name.
	desired kit.Desired[multicluster.ClusterName, *clusterSpec]

	// Only scans use these, and scans never overlap.
	known    map[string]map[multicluster.ClusterName]*clusterSpec // last usable specs by file
	reported map[string]string                                    // last logged error by file or cluster
	broken   int                                                  // this provider's share of BrokenFiles
}

// New returns a provider for opts. It fails on invalid options (separator, patterns); missing or
// broken files are not an error here: they are reported, and read once they are fixed.
func New(opts Options) (*Provider, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("file provider: %w", err)
	}
	if err := validSeparator(o.Separator); err != nil {
		return nil, fmt.Errorf("file provider: %w", err)
	}
	src := sources{files: o.Files, dirs: o.Dirs, dirPatterns: o.DirPatterns}
	for _, p := range o.DirPatterns {
		if err := checkPattern(p); err != nil {
			return nil, fmt.Errorf("file provider: dir pattern %q: %w", p, err)
		}
	}
	for _, pattern := range o.Globs {
		g, err := newGlob(pattern)
		if err != nil {
			return nil, fmt.Errorf("file provider: %w", err)
		}
		src.globs = append(src.globs, g)
	}
	if o.NameBase == "" {
		o.NameBase = nameBase(src.roots())
	}

	p := &Provider{
		opts:     o,
		src:      src,
		loader:   loader{base: o.NameBase, separator: o.Separator, policy: o.Policy, discovered: o.DiscoveredPolicy, maxSize: o.MaxFileSize},
		known:    map[string]map[multicluster.ClusterName]*clusterSpec{},
		reported: map[string]string{},
	}
	p.desired.Equal = sameCredentials
	p.engine, err = p.Init(kit.EngineOptions[multicluster.ClusterName]{Name: providerName, Options: o.Options,
		Sync: p.sync, Sources: []kit.Source[multicluster.ClusterName]{fileSource{p}}})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Get returns the engaged cluster name, or an error wrapping multicluster.ErrClusterNotFound.
// As in multicluster-runtime's file provider, the empty name stands for the first engaged
// cluster, here the first of ClusterNames (which are sorted); it is not found while no cluster
// is engaged. The manager never asks a provider for the empty name, its own (local) cluster.
func (p *Provider) Get(ctx context.Context, name multicluster.ClusterName) (cluster.Cluster, error) {
	if name == "" {
		names := p.ClusterNames()
		if len(names) == 0 {
			return nil, fmt.Errorf("file provider: no cluster is engaged: %w", multicluster.ErrClusterNotFound)
		}
		name = names[0]
	}
	return p.Members.Get(ctx, name)
}

// ClusterName returns the name under which the provider engages context of the kubeconfig file
// at path (made absolute against the working directory).
func (p *Provider) ClusterName(path, context string) (multicluster.ClusterName, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("file provider: %w", err)
	}
	return clusterName(p.opts.NameBase, p.opts.Separator, abs, context), nil
}

// ReadConfigs reads every configured kubeconfig once, without engaging anything, and returns the
// rest.Config of every usable context by cluster name, as the provider would engage it
// (Options.RESTOptions applied). The error joins the problems found, each naming its file (and
// context); the configs returned are usable even then. Command-line tools use it to list the
// fleet, or to pick a cluster to run a manager against.
func (p *Provider) ReadConfigs() (map[multicluster.ClusterName]*rest.Config, error) {
	res := p.scan(nil)
	configs := map[multicluster.ClusterName]*rest.Config{}
	for _, specs := range res.byFile {
		for name, spec := range specs {
			cfg, err := p.opts.RESTConfig(spec.config)
			if err != nil {
				res.contextErrs[name] = contextError{file: spec.file, context: spec.context, err: err}
				continue
			}
			configs[name] = cfg
		}
	}
	var errs []error
	for _, path := range slices.Sorted(maps.Keys(res.fileErrs)) {
		errs = append(errs, fmt.Errorf("%s: %w", path, res.fileErrs[path]))
	}
	for _, name := range slices.Sorted(maps.Keys(res.contextErrs)) {
		ce := res.contextErrs[name]
		errs = append(errs, fmt.Errorf("%s: context %q: %w", ce.file, ce.context, ce.err))
	}
	return configs, errors.Join(errs...)
}

// fileSource reads the files after every change (kit.Files) and, when it stops, takes this
// provider's broken files out of BrokenFiles.
type fileSource struct{ p *Provider }

func (s fileSource) Start(ctx context.Context, e *kit.Engine[multicluster.ClusterName]) (func(), error) {
	p := s.p
	stop, err := kit.Files[multicluster.ClusterName]{
		Scan:         p.scanFiles,
		Debounce:     p.opts.Debounce,
		PollInterval: p.opts.ResyncPeriod,
	}.Start(ctx, e)
	if err != nil {
		return nil, err
	}
	return func() {
		stop()
		BrokenFiles.Sub(float64(p.broken))
		p.broken = 0
	}, nil
}

// scanFiles reads the files, reports their problems, queues the clusters whose credentials
// appeared, changed or went away, and returns the directories to watch.
func (p *Provider) scanFiles(context.Context) []string {
	res := p.scan(p.known)
	p.known = res.byFile
	p.report(res)
	desired := map[multicluster.ClusterName]*clusterSpec{}
	for _, specs := range res.byFile {
		maps.Copy(desired, specs)
	}
	for _, name := range p.desired.Replace(desired) {
		p.engine.Add(name)
	}
	return slices.Collect(maps.Keys(res.watch))
}

// sync engages the cluster of one context with the credentials the files give it now, or
// disengages it when its context or file is gone.
func (p *Provider) sync(ctx context.Context, name multicluster.ClusterName) kit.Result {
	spec, ok := p.desired.Get(name)
	if !ok {
		p.engine.Disengage(name, nil, "its context or file is gone")
		return kit.Result{}
	}
	return p.engine.Engage(ctx, name, kit.Member{
		Name:   name,
		Config: spec.config,
		From:   fmt.Sprintf("context %q of %s", spec.context, spec.file),
	})
}
