// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kit

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/clusters"
	"mcr.dev/core/internal/accesscheck"
	"mcr.dev/core/internal/hostrun"
	"mcr.dev/core/multicluster"
)

// The kit's tests reach its mechanics, which providers do not see, under these names.

type (
	Loop[K comparable]        = loop[K]
	LoopOptions[K comparable] = loopOptions[K]
	Events                    = eventRecorder
)

const (
	DefaultQPS           = defaultQPS
	DefaultBurst         = defaultBurst
	DefaultExecTimeout   = defaultExecTimeout
	DefaultExecMaxOutput = defaultExecMaxOutput
	MaxNoteBytes         = maxNoteBytes
	ReasonEngageFailed   = reasonEngageFailed
)

var (
	CheckAccess = func(ctx context.Context, cl cluster.Cluster) error {
		return accesscheck.Check(ctx, cl.GetConfig(), cl.GetHTTPClient())
	}
	CheckServed = func(ctx context.Context, cl cluster.Cluster) error {
		return accesscheck.Served(ctx, cl.GetConfig(), cl.GetHTTPClient())
	}
	ErrUnauthorized = accesscheck.ErrUnauthorized
	ErrUnreachable  = accesscheck.ErrUnreachable
	RunHost         = hostrun.Start
)

func NewLoop[K comparable](opts LoopOptions[K]) *Loop[K] { return newLoop(opts) }

func NewEngine[K comparable](opts EngineOptions[K]) (*Engine[K], error) { return newEngine(opts) }

func (e *Engine[K]) Run(ctx context.Context, aware multicluster.Aware) error {
	return e.run(ctx, aware)
}

func (e *Engine[K]) Status() multicluster.FleetStatus { return e.status() }

func (e *Engine[K]) Options() Options { return e.options() }

func (e *Engine[K]) SetClusterDefaults(d clusters.Defaults) { e.setClusterDefaults(d) }

func (e *Engine[K]) Errorf(format string, args ...any) error { return e.errorf(format, args...) }

func (r Result) Merge(o Result) Result { return r.merge(o) }

func (o Options) Inherit(d clusters.Defaults) Options { return o.inherit(d) }

func (e *eventRecorder) Record(regarding client.Object, related runtime.Object, eventType, reason, note string) {
	e.record(regarding, related, eventType, reason, note)
}

func (p *Problem) Broken() bool { return p.broken }

func NewErrorsMetric(name string) *prometheus.CounterVec {
	errs, _ := newMetrics(name, "members")
	return errs
}

func NewBrokenMetric(name, members string) prometheus.Gauge {
	_, broken := newMetrics(name, members)
	return broken
}

// RunsHost reports whether Run starts EngineOptions.Host (EngineOptions.RunHost, set or implied).
func (e *Engine[K]) RunsHost() bool { return e.opts.RunHost }
