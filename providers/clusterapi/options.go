// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterapi

import (
	"context"

	"k8s.io/apimachinery/pkg/labels"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/providers/kit"
)

// providerName names the provider's logger, queue and Event reporting controller.
const providerName = "clusterapi-provider"

// Defaults of Options.
const (
	DefaultRetryMinDelay = kit.DefaultRetryMinDelay
	DefaultRetryMaxDelay = kit.DefaultRetryMaxDelay
	DefaultResyncPeriod  = kit.DefaultResyncPeriod
)

// Options configures a Provider. The zero value of every field selects its default; defaults are
// applied in one place, Options.withDefaults.
type Options struct {
	// APIVersion is the version of the Cluster type the provider watches and hands to IsReady
	// and Filter (*v1beta2.Cluster or *v1beta1.Cluster).
	//
	// Defaults to V1Beta2.
	APIVersion APIVersion

	// Namespaces restricts the provider to Clusters (and kubeconfig Secrets) in these
	// namespaces. With New, the provider's host cache holds only these namespaces, so Roles in
	// them are enough RBAC.
	//
	// Defaults to none: every namespace.
	Namespaces []string

	// Selector selects Clusters by label. A Cluster whose labels stop matching is disengaged.
	// It is applied by the provider, not by the cache, so that a Cluster that stops matching is
	// seen and disengaged like any other change.
	//
	// Defaults to nil: every Cluster.
	Selector labels.Selector

	// InfrastructureKinds selects Clusters by the kind of their spec.infrastructureRef, e.g.
	// "DockerCluster" or "AWSCluster".
	//
	// Defaults to none: every kind, also Clusters without an infrastructureRef.
	InfrastructureKinds []string

	// Filter is a predicate on the Cluster (of the type APIVersion selects), evaluated after
	// Namespaces, Selector and InfrastructureKinds each time the Cluster changes. A Cluster it
	// stops selecting is disengaged. It must be quick and must not block.
	//
	// Defaults to nil: every Cluster.
	Filter func(ctx context.Context, cluster client.Object) bool

	// IsReady reports whether a selected Cluster is ready to be engaged. A Cluster that stops
	// being ready is disengaged at once (no grace period) and engaged again when it is ready.
	// It must be quick and must not block.
	//
	// Defaults to ControlPlaneInitialized; see also ControlPlaneAvailable.
	IsReady func(ctx context.Context, cluster client.Object) bool

	// HostClusterOptions are passed to cluster.New for the host cluster that New builds, after
	// the provider's own (scheme with the Cluster API types; cache restricted to Namespaces and
	// labeled Secrets). Not used with NewForHost.
	//
	// Defaults to none.
	HostClusterOptions []cluster.Option

	// Options are the fields every provider shares (Policy, RESTOptions, ClusterOptions,
	// CacheSyncTimeout, SkipAccessCheck, retry delays, ResyncPeriod, EventRecorder, Logger),
	// with the defaults documented there. Cluster API kubeconfigs carry inline certificates or
	// tokens, which the zero Policy accepts. Events are recorded on Clusters; the Logger is
	// named "clusterapi-provider".
	kit.Options
}

// withDefaults is the only place defaults are applied.
func (o Options) withDefaults() Options {
	if o.APIVersion == "" {
		o.APIVersion = V1Beta2
	}
	if o.IsReady == nil {
		o.IsReady = ControlPlaneInitialized
	}
	o.SetDefaults(providerName)
	return o
}
