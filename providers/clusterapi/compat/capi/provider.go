// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package capi

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // upstream's ObjectToWatch may be a v1beta1 Cluster.
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/compat"
	"mcr.dev/core/providers/kit"
	"mcr.dev/providers/clusterapi"
)

// Options are multicluster-runtime's options of the Cluster API provider.
type Options struct {
	// ClusterOptions are passed to cluster.New for every member.
	ClusterOptions []cluster.Option

	// ObjectToWatch is the Cluster type to watch: a *v1beta2.Cluster (the default, when nil)
	// or a *v1beta1.Cluster. SetupWithManager fails on any other type.
	ObjectToWatch client.Object

	// GetSecret is not supported: the provider reads (and watches) the Cluster's kubeconfig
	// Secret itself. SetupWithManager fails when it is set.
	GetSecret func(ctx context.Context, cl client.Client, ccl client.Object) ([]byte, error)

	// NewCluster is not supported: the provider builds, starts and stops member clusters
	// itself. SetupWithManager fails when it is set; shape members with ClusterOptions.
	NewCluster func(ctx context.Context, ccl client.Object, cfg *rest.Config, opts ...cluster.Option) (cluster.Cluster, error)

	// IsReady says whether a Cluster (of the type of ObjectToWatch) is ready to be engaged.
	// Defaults to clusterapi.ControlPlaneInitialized: its control plane is initialized.
	IsReady func(ctx context.Context, ccl client.Object) bool
}

// Provider serves a cluster for every ready Cluster API Cluster once SetupWithManager has run;
// until then it serves none.
type Provider struct {
	compat.Deferred[*clusterapi.Provider]
	opts clusterapi.Options
	err  error // options without a counterpart, returned by SetupWithManager
}

var _ multicluster.ProviderRunnable = &Provider{}

// New returns a provider with opts. Pass it to mcmanager.New, then call SetupWithManager, which
// reports options the provider cannot honor.
func New(opts Options) *Provider {
	o, err := translate(opts)
	return &Provider{opts: o, err: err}
}

// translate maps upstream's options onto those of mcr's clusterapi provider, refusing what has
// no counterpart.
func translate(opts Options) (clusterapi.Options, error) {
	o := clusterapi.Options{
		IsReady: opts.IsReady,
		Options: kit.Options{ClusterOptions: opts.ClusterOptions},
	}
	var errs []error
	switch obj := opts.ObjectToWatch.(type) {
	case nil, *clusterv1.Cluster:
		o.APIVersion = clusterapi.V1Beta2
	case *clusterv1beta1.Cluster:
		o.APIVersion = clusterapi.V1Beta1
	default:
		errs = append(errs, fmt.Errorf("Options.ObjectToWatch of type %T is not supported: want a *v1beta2.Cluster or a *v1beta1.Cluster of sigs.k8s.io/cluster-api/api/core", obj))
	}
	if opts.GetSecret != nil {
		errs = append(errs, errors.New("Options.GetSecret is not supported: the provider reads the kubeconfig Secret <cluster>-kubeconfig (key \"value\", label cluster.x-k8s.io/cluster-name) itself; use mcr.dev/providers/clusterapi"))
	}
	if opts.NewCluster != nil {
		errs = append(errs, errors.New("Options.NewCluster is not supported: the provider builds member clusters itself with cluster.New; use Options.ClusterOptions, or mcr.dev/providers/clusterapi (RESTOptions, ClusterOptions)"))
	}
	return o, errors.Join(errs...)
}

// SetupWithManager builds mcr's provider on the cluster of mgr's local manager, the management
// cluster that holds the Cluster objects. The manager runs it.
func (p *Provider) SetupWithManager(mgr mcmanager.Manager) error {
	return p.SetUp("cluster-api provider", mgr, func(hostConfig *rest.Config) (*clusterapi.Provider, error) {
		if p.err != nil {
			return nil, p.err
		}
		return clusterapi.New(hostConfig, p.opts)
	})
}
