// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package gardener

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/labels"

	"sigs.k8s.io/controller-runtime/pkg/cluster"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"

	"mcr.dev/core/providers/kit"
)

// providerName names the provider's logger, queue and Event reporting controller.
const providerName = "gardener-provider"

// Topology says which Gardener cluster the provider runs against, and so what it watches.
type Topology string

const (
	// TopologyGarden runs against the garden cluster (the Gardener API): it engages one cluster
	// per usable Shoot, with short-lived admin credentials from the Shoot's adminkubeconfig
	// subresource. It is the default.
	TopologyGarden Topology = "garden"

	// TopologySeed runs against a seed cluster: it engages one cluster per
	// extensions.gardener.cloud Cluster object (one per shoot control plane the seed hosts),
	// with the kubeconfig of the Secret "gardener" in the shoot's control-plane namespace.
	TopologySeed Topology = "seed"
)

func (t Topology) validate() error {
	switch t {
	case TopologyGarden, TopologySeed:
		return nil
	}
	return fmt.Errorf("unknown Topology %q (want %q or %q)", t, TopologyGarden, TopologySeed)
}

// Defaults of Options.
const (
	// DefaultExpirationSeconds is the lifetime requested for admin credentials (one hour, the
	// default of the Gardener API too).
	DefaultExpirationSeconds int64 = 3600

	// MinExpirationSeconds is the shortest lifetime Gardener accepts for admin credentials (ten
	// minutes); New and NewForHost refuse less.
	MinExpirationSeconds int64 = 600

	// DefaultRefreshFraction is the share of the credentials' lifetime after which they are
	// renewed.
	DefaultRefreshFraction = 0.8

	DefaultRetryMinDelay = kit.DefaultRetryMinDelay
	DefaultRetryMaxDelay = kit.DefaultRetryMaxDelay
	DefaultResyncPeriod  = kit.DefaultResyncPeriod
)

// Options configures a Provider. The zero value of every field selects its default; defaults are
// applied in one place, Options.withDefaults.
type Options struct {
	// Topology selects what the provider watches: Shoots on a garden cluster, or extensions
	// Cluster objects on a seed cluster.
	//
	// Defaults to TopologyGarden.
	Topology Topology

	// Namespaces restricts the provider to Shoots of these garden namespaces (project namespaces,
	// "garden-<project>"). With TopologyGarden, the provider's cache holds only these namespaces,
	// so Roles in them are enough RBAC. With TopologySeed it selects the Cluster objects whose
	// embedded Shoot lives in one of them.
	//
	// Defaults to none: every namespace.
	Namespaces []string

	// Selector selects Shoots by label (with TopologySeed: the labels of the Shoot embedded in
	// the Cluster object). A Shoot whose labels stop matching is disengaged.
	//
	// Defaults to nil: every Shoot.
	Selector labels.Selector

	// Filter is a predicate on the Shoot (with TopologySeed: the Shoot embedded in the Cluster
	// object), evaluated after Namespaces and Selector each time the object changes. A Shoot it
	// stops selecting is disengaged. It must be quick and must not block.
	//
	// Defaults to nil: every Shoot.
	Filter func(ctx context.Context, shoot *gardencorev1beta1.Shoot) bool

	// IsReady reports whether a selected Shoot can be engaged. A Shoot that stops being ready
	// is disengaged at once (no grace period) and engaged again, with fresh credentials, when
	// it is ready again. It must be quick and must not block.
	//
	// Defaults to IsUsable, else to ShootUsable with TopologyGarden and to ShootAwake with
	// TopologySeed, whose Cluster objects carry a copy of the Shoot's status that is only
	// refreshed when gardenlet reconciles the Shoot.
	IsReady func(ctx context.Context, shoot *gardencorev1beta1.Shoot) bool

	// IsUsable is the former name of IsReady, used when IsReady is unset.
	//
	// Deprecated: use IsReady.
	IsUsable func(ctx context.Context, shoot *gardencorev1beta1.Shoot) bool

	// ExpirationSeconds is the lifetime the provider requests for admin credentials
	// (AdminKubeconfigRequest spec.expirationSeconds). Gardener may issue shorter ones (its
	// operators cap the lifetime); the provider always goes by the returned
	// status.expirationTimestamp. Used with TopologyGarden only.
	//
	// Defaults to DefaultExpirationSeconds (3600). New and NewForHost fail for less than
	// MinExpirationSeconds (600), which Gardener refuses.
	ExpirationSeconds int64

	// RefreshFraction is the share of the credentials' lifetime after which the provider
	// requests new ones and engages the cluster again with them; the old instance is
	// disengaged once the new one is engaged, well before the old credentials expire. Must be
	// greater than 0 and less than 1. Used with TopologyGarden only.
	//
	// Defaults to DefaultRefreshFraction (0.8): with one-hour credentials, every 48 minutes.
	RefreshFraction float64

	// HostClusterOptions are passed to cluster.New for the garden or seed cluster the provider
	// watches, after the provider's own (a scheme with the Gardener types, a cache restricted
	// to what the provider reads). Not used with NewForHost, whose host cluster the caller
	// configures.
	//
	// Defaults to none.
	HostClusterOptions []cluster.Option

	// Options are the fields every provider shares (Policy, RESTOptions, ClusterOptions,
	// CacheSyncTimeout, SkipAccessCheck, retry delays, ResyncPeriod, EventRecorder, Logger),
	// with the defaults documented there. Gardener's kubeconfigs carry inline certificates or
	// tokens, which the zero Policy accepts. CacheSyncTimeout also bounds each adminkubeconfig
	// request. Events are recorded on Shoots (TopologyGarden) or Cluster objects (TopologySeed);
	// the Logger is named "gardener-provider".
	kit.Options

	// defaultIsReady says that IsReady is the default, whose reasons can be logged.
	defaultIsReady bool
}

// withDefaults is the only place defaults are applied.
func (o Options) withDefaults() Options {
	if o.Topology == "" {
		o.Topology = TopologyGarden
	}
	if o.IsReady == nil {
		o.IsReady = o.IsUsable
	}
	if o.IsReady == nil {
		o.defaultIsReady = true
		if o.Topology == TopologySeed {
			o.IsReady = ShootAwake
		} else {
			o.IsReady = ShootUsable
		}
	}
	if o.ExpirationSeconds == 0 {
		o.ExpirationSeconds = DefaultExpirationSeconds
	}
	if o.RefreshFraction == 0 {
		o.RefreshFraction = DefaultRefreshFraction
	}
	o.SetDefaults(providerName)
	return o
}

func (o Options) validate() error {
	if err := o.Topology.validate(); err != nil {
		return err
	}
	if o.ExpirationSeconds < MinExpirationSeconds {
		return fmt.Errorf("Options.ExpirationSeconds is %d, Gardener refuses less than %d", o.ExpirationSeconds, MinExpirationSeconds)
	}
	if o.RefreshFraction <= 0 || o.RefreshFraction >= 1 {
		return fmt.Errorf("Options.RefreshFraction is %v, want more than 0 and less than 1", o.RefreshFraction)
	}
	return nil
}
