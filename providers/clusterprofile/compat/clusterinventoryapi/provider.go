// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterinventoryapi

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/compat"
	"mcr.dev/core/providers/kit"
	"mcr.dev/providers/clusterprofile"
	"mcr.dev/providers/clusterprofile/compat/clusterinventoryapi/kubeconfigstrategy"
)

// Options are multicluster-runtime's options of the cluster-inventory-api provider.
type Options struct {
	// ClusterOptions are passed to cluster.New for every member.
	ClusterOptions []cluster.Option

	// KubeconfigStrategyOption says where members' credentials come from: exactly one of its
	// Secret and AccessProvider (or the deprecated CredentialsProvider) must be set.
	KubeconfigStrategyOption kubeconfigstrategy.Option

	// NewCluster is not supported: mcr's provider builds, starts and stops member clusters
	// itself, and New returns an error when it is set. Shape members with ClusterOptions.
	NewCluster func(ctx context.Context, clp *v1alpha1.ClusterProfile, cfg *rest.Config, opts ...cluster.Option) (cluster.Cluster, error)

	// IsReady says whether a ClusterProfile is ready to be engaged. Defaults to its
	// ControlPlaneHealthy condition being True.
	IsReady func(ctx context.Context, clp *v1alpha1.ClusterProfile) bool
}

// Provider serves a cluster for every ready ClusterProfile once SetupWithManager has run; until
// then it serves none.
type Provider struct {
	compat.Deferred[*clusterprofile.Provider]
	opts clusterprofile.Options
}

var _ multicluster.ProviderRunnable = &Provider{}

// New checks opts and returns a provider. Pass it to mcmanager.New, then call
// SetupWithManager.
func New(opts Options) (*Provider, error) {
	o, err := translate(opts)
	if err != nil {
		return nil, fmt.Errorf("cluster-inventory-api provider: %w", err)
	}
	return &Provider{opts: o}, nil
}

// translate maps upstream's options onto those of mcr's clusterprofile provider, refusing
// what has no counterpart.
func translate(opts Options) (clusterprofile.Options, error) {
	o := clusterprofile.Options{
		IsReady: opts.IsReady,
		Options: kit.Options{ClusterOptions: opts.ClusterOptions},
	}
	if opts.NewCluster != nil {
		return o, errors.New("Options.NewCluster is not supported: the provider builds member clusters itself with cluster.New; use Options.ClusterOptions, or mcr.dev/providers/clusterprofile (RESTOptions, ClusterOptions)")
	}
	strategy := opts.KubeconfigStrategyOption
	// CredentialsProvider is the deprecated name of AccessProvider, checked as upstream's main
	// branch does.
	accessProvider := strategy.AccessProvider
	if strategy.CredentialsProvider != nil { //nolint:staticcheck // reads the deprecated name on purpose
		if accessProvider != nil {
			return o, errors.New("KubeconfigStrategyOption: only one of AccessProvider or CredentialsProvider can be provided")
		}
		accessProvider = strategy.CredentialsProvider //nolint:staticcheck // idem
	}
	switch {
	case strategy.Secret == nil && accessProvider == nil:
		return o, errors.New("KubeconfigStrategyOption: either AccessProvider or Secret must be provided")
	case strategy.Secret != nil && accessProvider != nil:
		return o, errors.New("KubeconfigStrategyOption: only one of AccessProvider or Secret can be provided")
	case strategy.Secret != nil:
		if strategy.Secret.ConsumerName == "" {
			return o, errors.New("KubeconfigStrategyOption.Secret: ConsumerName must be set")
		}
		o.Secret = &clusterprofile.SecretStrategy{ConsumerName: strategy.Secret.ConsumerName}
	default:
		if accessProvider.Provider == nil {
			return o, errors.New("KubeconfigStrategyOption.AccessProvider: Provider must be set")
		}
		if err := clusterprofile.ValidateProviderConfig(accessProvider.Provider); err != nil {
			return o, fmt.Errorf("KubeconfigStrategyOption.AccessProvider: %w", err)
		}
		o.AccessProviders = accessProvider.Provider
	}
	return o, nil
}

// SetupWithManager builds mcr's provider on the cluster of mgr's local manager, the hub that
// holds the ClusterProfiles. The manager runs it.
func (p *Provider) SetupWithManager(mgr mcmanager.Manager) error {
	return p.SetUp("cluster-inventory-api provider", mgr, func(hostConfig *rest.Config) (*clusterprofile.Provider, error) {
		return clusterprofile.New(hostConfig, p.opts)
	})
}
