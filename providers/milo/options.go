// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package milo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/kubeconfig"
	"mcr.dev/core/providers/kit"
)

// providerName names the provider's logger, queue and Event reporting controller.
const providerName = "milo-provider"

// Defaults of Options.
const (
	DefaultUnreadyGracePeriod = 30 * time.Second
	DefaultRetryMinDelay      = kit.DefaultRetryMinDelay
	DefaultRetryMaxDelay      = kit.DefaultRetryMaxDelay
	DefaultResyncPeriod       = kit.DefaultResyncPeriod
)

// Options configures a Provider. The zero value of every field selects its default; defaults are
// applied in one place, Options.withDefaults.
type Options struct {
	// Mode selects what the provider watches and how it reaches a project's control plane:
	// ModeProject (Projects on the Milo apiserver, control planes through the Milo apiserver's
	// project paths) or ModeProjectControlPlane (ProjectControlPlanes on the infrastructure
	// cluster, control planes at their in-cluster Services).
	//
	// Defaults to ModeProject.
	Mode Mode

	// Selector selects the watched objects by label. An object whose labels stop matching is
	// disengaged at once. It is applied by the provider, not by the cache, so that an object
	// that stops matching is seen and disengaged like any other change.
	//
	// Defaults to nil: every object.
	Selector labels.Selector

	// IsReady reports whether a selected object (a *resourcemanagerv1alpha1.Project or a
	// *infrastructurev1alpha1.ProjectControlPlane, after Mode) is ready to be engaged. It must
	// be quick and must not block.
	//
	// Defaults to ProjectReady in ModeProject (condition Ready is True) and ControlPlaneReady in
	// ModeProjectControlPlane (condition ControlPlaneReady is True).
	IsReady func(ctx context.Context, obj client.Object) bool

	// UnreadyGracePeriod is how long an engaged project may stay unready before it is
	// disengaged; if it is ready again within the period it stays engaged, untouched. A project
	// that is not engaged is engaged as soon as it is ready. A negative value disengages at
	// once.
	//
	// Defaults to DefaultUnreadyGracePeriod (30s).
	UnreadyGracePeriod time.Duration

	// BaseConfig is the config every project's config is derived from: its TLS settings and
	// credentials are the ones the provider presents to every project's control plane. In
	// ModeProject its Host is the Milo apiserver whose project paths serve the control planes.
	//
	// Defaults to the host config given to New (the host cluster's config with NewForHost).
	BaseConfig *rest.Config

	// ControlPlaneHost returns the Host of a project's control plane (a URL, possibly with a
	// path) for the project's config, a copy of BaseConfig with only Host replaced. Override
	// it for other layouts: a gateway, another Service naming, tests.
	//
	// Defaults, in ModeProject, to BaseConfig's URL with the path
	// /apis/resourcemanager.miloapis.com/v1alpha1/projects/<project>/control-plane (ControlPlanePath),
	// and in ModeProjectControlPlane to https://milo-apiserver.project-<project>.svc.cluster.local:6443
	// (ServiceHost).
	ControlPlaneHost func(project string) string

	// HostClusterOptions are passed to cluster.New for the host cluster that New builds, after
	// the provider's own (a scheme with the Milo types). Not used with NewForHost.
	//
	// Defaults to none.
	HostClusterOptions []cluster.Option

	// checkProject, when set, refuses a project whose name the default ControlPlaneHost cannot
	// turn into an unambiguous host (CheckServiceProject).
	checkProject func(project string) error

	// Options are the fields every provider shares (Policy, RESTOptions, ClusterOptions,
	// CacheSyncTimeout, SkipAccessCheck, retry delays, ResyncPeriod, EventRecorder, Logger),
	// with the defaults documented there. Policy is not used: a project's config is BaseConfig,
	// the operator's own, not a kubeconfig read from the cluster. Events are recorded on the
	// watched objects (cluster-scoped, so in the namespace "default"); the Logger is named
	// "milo-provider".
	kit.Options
}

// withDefaults is the only place defaults are applied; host is the config the provider watches
// through, the default BaseConfig.
func (o Options) withDefaults(host *rest.Config) (Options, error) {
	if o.Mode == "" {
		o.Mode = ModeProject
	}
	if err := o.Mode.validate(); err != nil {
		return o, err
	}
	if o.IsReady == nil {
		o.IsReady = o.Mode.defaultIsReady()
	}
	if o.UnreadyGracePeriod == 0 {
		o.UnreadyGracePeriod = DefaultUnreadyGracePeriod
	}
	if o.BaseConfig == nil {
		o.BaseConfig = host
	}
	if o.BaseConfig == nil {
		return o, errors.New("no BaseConfig and no host config")
	}
	// Every project's URL is derived from it.
	if err := kubeconfig.CheckServerURL("BaseConfig.Host", o.BaseConfig.Host); err != nil {
		return o, fmt.Errorf("the Host of BaseConfig is refused: %w", err)
	}
	if o.ControlPlaneHost == nil {
		switch o.Mode {
		case ModeProject:
			base, _, err := rest.DefaultServerUrlFor(o.BaseConfig)
			if err != nil {
				return o, fmt.Errorf("the URL of BaseConfig: %w", err)
			}
			o.ControlPlaneHost = func(project string) string { return ControlPlaneURL(base, project) }
		case ModeProjectControlPlane:
			o.ControlPlaneHost = serviceHost
			o.checkProject = CheckServiceProject
		}
	}
	o.SetDefaults(providerName)
	return o, nil
}
