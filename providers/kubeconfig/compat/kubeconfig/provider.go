// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kubeconfig

import (
	"context"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/compat"
	"mcr.dev/core/providers/kit"
	mcrkubeconfig "mcr.dev/providers/kubeconfig"
)

const (
	// DefaultKubeconfigSecretLabel is the default of Options.KubeconfigSecretLabel: a Secret
	// is a member's kubeconfig when it carries this label with the value "true".
	DefaultKubeconfigSecretLabel = mcrkubeconfig.UpstreamSecretLabel

	// DefaultKubeconfigSecretKey is the default of Options.KubeconfigSecretKey.
	DefaultKubeconfigSecretKey = mcrkubeconfig.DefaultSecretKey
)

// Options are multicluster-runtime's options of the kubeconfig provider.
type Options struct {
	// Namespace is the namespace of the kubeconfig Secrets. Defaults to
	// mcrkubeconfig.DefaultNamespace ("mcr-system").
	Namespace string
	// KubeconfigSecretLabel is the label that selects the Secrets. Defaults to
	// DefaultKubeconfigSecretLabel.
	KubeconfigSecretLabel string
	// KubeconfigSecretKey is the data key of the kubeconfig. Defaults to
	// DefaultKubeconfigSecretKey.
	KubeconfigSecretKey string
	// ClusterOptions are passed to cluster.New for every member.
	ClusterOptions []cluster.Option
	// RESTOptions change every member's rest.Config before its cluster is built.
	RESTOptions []func(cfg *rest.Config) error
}

// Provider serves the clusters of the kubeconfig Secrets once SetupWithManager has run; until
// then it serves none.
type Provider struct {
	compat.Deferred[*mcrkubeconfig.Provider]
	opts Options
}

var _ multicluster.ProviderRunnable = &Provider{}

// New returns a provider with opts. Pass it to mcmanager.New, then call SetupWithManager.
func New(opts Options) *Provider {
	return &Provider{opts: opts}
}

// SetupWithManager builds mcr's provider on the host cluster of mgr. The manager runs it.
func (p *Provider) SetupWithManager(_ context.Context, mgr mcmanager.Manager) error {
	return p.SetUp("kubeconfig provider", mgr, func(hostConfig *rest.Config) (*mcrkubeconfig.Provider, error) {
		return mcrkubeconfig.New(hostConfig, mcrkubeconfig.Options{
			Namespaces:  nonEmpty(p.opts.Namespace),
			SecretLabel: firstNonEmpty(p.opts.KubeconfigSecretLabel, DefaultKubeconfigSecretLabel),
			SecretKey:   p.opts.KubeconfigSecretKey,
			Options:     kit.Options{ClusterOptions: p.opts.ClusterOptions, RESTOptions: p.opts.RESTOptions},
		})
	})
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// nonEmpty returns ns as a list, none when it is empty.
func nonEmpty(ns string) []string {
	if ns == "" {
		return nil
	}
	return []string{ns}
}
