// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterprofile

import (
	"context"
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/cluster-inventory-api/pkg/access"

	"mcr.dev/core/providers/kit"
)

// providerName names the provider's logger, queue and Event reporting controller.
const providerName = "clusterprofile-provider"

// Defaults of Options.
const (
	DefaultUnreadyGracePeriod = time.Minute
	DefaultRetryMinDelay      = kit.DefaultRetryMinDelay
	DefaultRetryMaxDelay      = kit.DefaultRetryMaxDelay
	DefaultResyncPeriod       = kit.DefaultResyncPeriod
)

// SecretStrategy configures the deprecated Secret strategy of the Cluster Inventory API: the
// kubeconfig of a ClusterProfile is the "Config" data of the one Secret in the profile's
// namespace labeled x-k8s.io/cluster-inventory-consumer=<ConsumerName> and
// x-k8s.io/cluster-profile=<profile name>.
type SecretStrategy struct {
	// ConsumerName is the value of the x-k8s.io/cluster-inventory-consumer label, the name
	// under which the cluster manager provisions kubeconfigs for this controller. Required.
	ConsumerName string
}

// Options configures a Provider. The zero value of every field selects its default; defaults are
// applied in one place, Options.withDefaults. At least one of AccessProviders and Secret must be
// set.
type Options struct {
	// AccessProviders is the operator's KEP-5339 access provider configuration, usually loaded
	// with RegisterProviderFileFlag or LoadProviderFile. A profile is reached through the first
	// provider (in this order) that its status.accessProviders (or the deprecated
	// status.credentialProviders) lists: a rest.Config for the listed server and CA whose
	// credentials come from the provider's exec plugin. Profile-sourced plugin args and env
	// are used only as each provider's policies allow (default: ignored). New and NewForHost
	// validate it (ValidateProviderConfig) and keep a deep copy.
	//
	// Defaults to nil: the access-provider strategy is off.
	AccessProviders *access.Config

	// Secret turns on the deprecated Secret strategy, used for profiles that list no access
	// provider of AccessProviders (or for all, without AccessProviders). The kubeconfig is
	// loaded under Policy.
	//
	// Defaults to nil: off, and the provider neither reads nor caches Secrets.
	Secret *SecretStrategy

	// Namespaces restricts the provider to ClusterProfiles (and kubeconfig Secrets) in these
	// namespaces; the host cache New builds holds only these namespaces, so Roles in them are
	// enough RBAC. With NewForHost the host's owner configures its cache.
	//
	// Defaults to none: every namespace.
	Namespaces []string

	// Selector selects ClusterProfiles by label, e.g. x-k8s.io/cluster-manager=<name>. A profile
	// whose labels stop matching is disengaged.
	//
	// Defaults to nil: every ClusterProfile.
	Selector labels.Selector

	// Filter is a predicate on the ClusterProfile, evaluated after Namespaces and Selector each
	// time the profile changes. A profile it stops selecting is disengaged. It must be quick and
	// must not block.
	//
	// Defaults to nil: every ClusterProfile.
	Filter func(ctx context.Context, cp *v1alpha1.ClusterProfile) bool

	// IsReady reports whether a selected ClusterProfile is ready to be engaged. An engaged
	// profile that stops being ready stays engaged for UnreadyGracePeriod and is disengaged if
	// it is still unready then; it is engaged again once ready. It must be quick and must not
	// block.
	//
	// Defaults to ControlPlaneHealthy (the ControlPlaneHealthy condition is True); see also
	// ConditionsTrue and Always.
	IsReady func(ctx context.Context, cp *v1alpha1.ClusterProfile) bool

	// UnreadyGracePeriod is how long an engaged cluster whose profile became unready stays
	// engaged, so that a blip of the cluster manager's health reporting does not restart every
	// controller on the cluster. A negative value disengages at once.
	//
	// Defaults to DefaultUnreadyGracePeriod (1m).
	UnreadyGracePeriod time.Duration

	// Placement restricts the fleet to the ClusterProfiles that the selected PlacementDecisions
	// (KEP-5313) reference, as they change: a profile added to a selected slice is engaged
	// (if it is also selected by Namespaces, Selector and Filter, and ready), one no selected
	// slice references any more is disengaged, and the slices of one decision are read as one.
	// A reference to a profile that does not exist is reported (ReasonUnknownClusterProfile),
	// a deleted slice too (ReasonPlacementDecisionRemoved); neither stops the provider. With
	// New the host cache holds only the selected PlacementDecisions. Needs list and watch on
	// placementdecisions besides config/rbac.yaml (docs/providers/clusterprofile.md, Placement).
	//
	// Defaults to nil: every ClusterProfile, whatever PlacementDecisions say.
	Placement *Placement

	// HostClusterOptions are passed to cluster.New for the host (hub) cluster that New builds,
	// after the provider's own (scheme with the ClusterProfile type; cache restricted to
	// Namespaces and, with Secret, to the consumer's labeled Secrets). Not used with NewForHost,
	// whose host cluster its owner configures.
	//
	// Defaults to none.
	HostClusterOptions []cluster.Option

	// Options are the fields every provider shares (Policy, RESTOptions, ClusterOptions,
	// CacheSyncTimeout, SkipAccessCheck, retry delays, ResyncPeriod, EventRecorder, Logger),
	// with the defaults documented there. Policy says what the data of the cluster inventory
	// may ask for: for the Secret strategy it is the kubeconfig policy; for access providers,
	// whose exec plugins come from the operator's file and so are always allowed, it governs
	// what the profile puts into the config, as kubeconfig.Check does for a kubeconfig: the
	// server (https, no user info, query or fragment), proxy-url (AllowProxyURL),
	// insecure-skip-tls-verify (AllowInsecure), certificate-authority, a file path
	// (AllowLocalFiles), and the exec env of the additional-envs extension (DefaultExecEnv and
	// AllowExecEnv). Events are recorded on
	// ClusterProfiles; the Logger is named "clusterprofile-provider".
	kit.Options
}

// withDefaults is the only place defaults are applied.
func (o Options) withDefaults() Options {
	if o.IsReady == nil {
		o.IsReady = ControlPlaneHealthy
	}
	if o.UnreadyGracePeriod == 0 {
		o.UnreadyGracePeriod = DefaultUnreadyGracePeriod
	}
	if o.UnreadyGracePeriod < 0 {
		o.UnreadyGracePeriod = 0
	}
	o.SetDefaults(providerName)
	return o
}

// validate reports options that cannot work.
func (o Options) validate() error {
	var errs []error
	if o.AccessProviders == nil && o.Secret == nil {
		errs = append(errs, errors.New("set Options.AccessProviders (KEP-5339 access providers) or Options.Secret (the deprecated Secret strategy)"))
	}
	if o.AccessProviders != nil {
		errs = append(errs, ValidateProviderConfig(o.AccessProviders))
	}
	if o.Placement != nil {
		if _, err := o.Placement.selector(); err != nil {
			errs = append(errs, err)
		}
	}
	if o.Secret != nil && o.Secret.ConsumerName == "" {
		errs = append(errs, errors.New("Options.Secret.ConsumerName is empty"))
	}
	return errors.Join(errs...)
}
