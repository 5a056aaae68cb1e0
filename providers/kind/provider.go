// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kind

import (
	"context"
	"strings"

	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
)

// Provider engages the clusters of the local kind installation. Create it with New; a
// multi-cluster manager runs it (Start). Get and IndexField come from the embedded
// clusters.Clusters.
type Provider struct {
	// Members supplies Get, IndexField, ClusterNames, ListClusters and Start, which runs the
	// engine.
	kit.Members[multicluster.ClusterName]

	opts   Options
	kind   *kindCalls
	engine *kit.Engine[multicluster.ClusterName]
	// listed holds the selected kind clusters of the last list that worked.
	listed kit.Desired[multicluster.ClusterName, struct{}]
	// listErr is the last list error logged, listIgnored the last names logged as ignored. Only
	// lists use them, and they never overlap.
	listErr, listIgnored string
}

// New returns a provider for opts.
func New(opts Options) *Provider {
	o := opts.withDefaults()
	p := &Provider{opts: o, kind: newKindCalls(o.KindOptions, o.CommandTimeout, concurrentReads)}
	// NewEngine fails only without Name, Clusters or Sync, which are all given.
	p.engine, _ = p.Init(kit.EngineOptions[multicluster.ClusterName]{Name: providerName, Options: o.Options,
		Sync: p.sync, Sources: []kit.Source[multicluster.ClusterName]{kindSource{p}}, Subject: "Kind cluster"})
	return p
}

// kindSource lists the kind clusters every PollInterval (kit.Poll) and, when it stops, gives the
// container engine commands still running a CommandTimeout to finish.
type kindSource struct{ p *Provider }

func (s kindSource) Start(ctx context.Context, e *kit.Engine[multicluster.ClusterName]) (func(), error) {
	p := s.p
	stop, err := kit.Poll[multicluster.ClusterName]{List: p.list, Interval: p.opts.PollInterval}.Start(ctx, e)
	if err != nil {
		return nil, err
	}
	return func() {
		stop()
		if !p.kind.wait(p.opts.CommandTimeout) {
			p.opts.Logger.Info("Container engine commands still running after stop; leaving them to finish", "waited", p.opts.CommandTimeout.String())
		}
	}, nil
}

// list lists the kind clusters and queues every selected one, whose kubeconfig is read again (a
// cluster deleted and created again between two polls has new credentials), and every one that
// is gone. A failed list changes nothing: it says nothing about the clusters.
func (p *Provider) list(ctx context.Context) error {
	names, ignored, err := p.kind.list(ctx)
	if ctx.Err() != nil {
		return nil
	}
	log := p.opts.Logger
	if err != nil {
		if msg := err.Error(); msg != p.listErr {
			p.listErr = msg
			log.Error(err, "Cannot list kind clusters; keeping the engaged ones and trying again", "retryIn", p.opts.PollInterval.String())
		}
		return nil
	}
	if p.listErr != "" {
		p.listErr = ""
		log.Info("Listing kind clusters works again")
	}
	if msg := strings.Join(ignored, ", "); msg != p.listIgnored {
		p.listIgnored = msg
		if msg != "" {
			log.Info("Ignoring containers labeled as kind nodes whose cluster name is not one kind accepts", "names", msg)
		}
	}
	listed := map[multicluster.ClusterName]struct{}{}
	for _, name := range names {
		if strings.HasPrefix(name, p.opts.Prefix) {
			listed[multicluster.ClusterName(name)] = struct{}{}
		}
	}
	// Without Desired.Equal, every listed cluster counts as changed.
	for _, name := range p.listed.Replace(listed) {
		p.engine.Add(name)
	}
	return nil
}
