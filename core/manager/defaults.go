// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package manager

import (
	"fmt"
	"reflect"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/clusters"
	"mcr.dev/core/multicluster"
)

// WithClusterDefaults sets the cluster options (scheme, cache options, QPS and Burst, shared REST
// mappers) once for the whole manager: every member cluster the provider builds inherits them,
// and so does the local cluster, unless the provider's or the local manager's own options set
// them.
//
// Providers take them through clusters.DefaultsReceiver, which every provider built on the
// provider kit implements; the manager hands them over when it is created, before it starts
// the provider. For members, the provider's own options win field by field, as
// clusters.Defaults describes. For the local cluster, New uses them for what its Options and
// config leave unset: Options.Scheme when nil, Options.Cache when it is the zero value,
// Options.MapperProvider when nil, and the config's QPS and Burst when it sets neither
// (ctrl.GetConfig sets 20 and 30). WithMultiCluster wraps a local manager that is already
// built: they do not reach it there.
//
// A provider that does not implement clusters.DefaultsReceiver keeps its own options; the
// manager logs that once. Without this option nothing is inherited: every provider uses its own
// options and their defaults.
func WithClusterDefaults(d clusters.Defaults) Option {
	return func(m *mcManager) { m.clusterDefaults = &d }
}

// inheritLocal fills what the local manager's options and config leave unset from d.
func inheritLocal(d clusters.Defaults, cfg *rest.Config, opts Options) (*rest.Config, Options) {
	if opts.Scheme == nil {
		opts.Scheme = d.Scheme
	}
	if reflect.ValueOf(opts.Cache).IsZero() {
		var co cluster.Options
		d.ClusterOption()(&co)
		opts.Cache = co.Cache
	}
	if opts.MapperProvider == nil && d.RESTMappers != nil {
		opts.MapperProvider = d.RESTMappers.MapperProvider
	}
	if cfg != nil && cfg.QPS == 0 && cfg.Burst == 0 && (d.QPS != 0 || d.Burst != 0) {
		cfg = rest.CopyConfig(cfg)
		cfg.QPS, cfg.Burst = d.QPS, d.Burst
	}
	return cfg, opts
}

// handClusterDefaults gives the provider the manager's cluster defaults, if there are some.
func (m *mcManager) handClusterDefaults(provider multicluster.Provider) {
	if m.clusterDefaults == nil || provider == nil {
		return
	}
	receiver, ok := provider.(clusters.DefaultsReceiver)
	if !ok {
		m.log.Info("The provider does not take the manager's cluster defaults: its members use the provider's own options",
			"provider", fmt.Sprintf("%T", provider))
		return
	}
	receiver.SetClusterDefaults(*m.clusterDefaults)
}
