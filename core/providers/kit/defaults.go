// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kit

import (
	"mcr.dev/core/clusters"
)

var _ clusters.DefaultsReceiver = &Members[string]{}

// SetClusterDefaults makes the provider build its members' clusters under the manager's cluster
// defaults d (scheme, cache options, QPS and Burst), with the provider's own Options taking
// precedence as clusters.Defaults describes. The manager calls it (manager.WithClusterDefaults)
// before it starts the provider; members engaged before the call keep the clusters they have.
func (m *Members[K]) SetClusterDefaults(d clusters.Defaults) {
	if m.engine != nil {
		m.engine.setClusterDefaults(d)
	}
}

// setClusterDefaults makes Engage build members' clusters under d; see Members.SetClusterDefaults.
func (e *Engine[K]) setClusterDefaults(d clusters.Defaults) { e.inherited.Store(&d) }

// memberOptions returns the options a member's cluster is built with: the provider's Options
// under the manager's cluster defaults, or under the zero clusters.Defaults (shared REST
// mappers, restmapper.Default) until the manager hands the provider some.
func (e *Engine[K]) memberOptions() Options {
	var d clusters.Defaults
	if inherited := e.inherited.Load(); inherited != nil {
		d = *inherited
	}
	return e.opts.Options.inherit(d)
}

// noteDefaultsUnused logs, once, that the manager's cluster defaults do not reach a member the
// provider built itself (Member.Cluster), so that a scheme set only on the manager does not go
// missing in silence.
func (e *Engine[K]) noteDefaultsUnused() {
	if e.inherited.Load() != nil && e.inheritedUnused.CompareAndSwap(false, true) {
		e.log.Info("The manager's cluster defaults do not apply to the members this provider builds itself; set the provider's own options")
	}
}

// ProviderName is the provider's name, e.g. "clusterapi-provider" (EngineOptions.Name): the
// fleet debug endpoint (manager.AddFleetDebugHandler) shows it beside each member.
func (m *Members[K]) ProviderName() string {
	if m.engine == nil {
		return ""
	}
	return m.engine.opts.Name
}
