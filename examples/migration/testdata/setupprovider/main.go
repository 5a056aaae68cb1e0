// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// An in-house provider written the way multicluster-runtime v0.24.1's kubeconfig provider is: a
// controller on the local manager, set up with SetupWithManager, that engages a cluster through
// the manager for every labeled ConfigMap holding an API server URL.
package main

import (
	"context"
	"errors"
	"os"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"
)

// Provider engages one cluster per ConfigMap labeled "fleet.example.com/member".
type Provider struct {
	mgr mcmanager.Manager

	mu       sync.Mutex
	clusters map[multicluster.ClusterName]cluster.Cluster
}

var _ multicluster.Provider = &Provider{}

// SetupWithManager watches the member ConfigMaps on the local manager.
func (p *Provider) SetupWithManager(ctx context.Context, mgr mcmanager.Manager) error {
	p.mgr = mgr
	return ctrl.NewControllerManagedBy(mgr.GetLocalManager()).
		Named("member-configmaps").
		For(&corev1.ConfigMap{}).
		Complete(p)
}

// Reconcile engages the ConfigMap's cluster.
func (p *Provider) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var cm corev1.ConfigMap
	if err := p.mgr.GetLocalManager().GetClient().Get(ctx, req.NamespacedName, &cm); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if cm.Labels["fleet.example.com/member"] != "true" {
		return reconcile.Result{}, nil
	}
	cl, err := cluster.New(&rest.Config{Host: cm.Data["server"]})
	if err != nil {
		return reconcile.Result{}, err
	}
	name := multicluster.ClusterName(req.Name)
	p.mu.Lock()
	p.clusters[name] = cl
	p.mu.Unlock()
	go func() { _ = cl.Start(ctx) }()
	return reconcile.Result{}, p.mgr.Engage(ctx, name, cl)
}

// Get returns an engaged cluster.
func (p *Provider) Get(_ context.Context, name multicluster.ClusterName) (cluster.Cluster, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if cl, ok := p.clusters[name]; ok {
		return cl, nil
	}
	return nil, multicluster.ErrClusterNotFound
}

// IndexField indexes every engaged cluster.
func (p *Provider) IndexField(ctx context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var errs []error
	for _, cl := range p.clusters {
		errs = append(errs, cl.GetFieldIndexer().IndexField(ctx, obj, field, extract))
	}
	return errors.Join(errs...)
}

func main() {
	ctx := ctrl.SetupSignalHandler()
	provider := &Provider{clusters: map[multicluster.ClusterName]cluster.Cluster{}}
	mgr, err := mcmanager.New(ctrl.GetConfigOrDie(), provider, manager.Options{})
	if err != nil {
		os.Exit(1)
	}
	if err := provider.SetupWithManager(ctx, mgr); err != nil {
		os.Exit(1)
	}
	err = mcbuilder.ControllerManagedBy(mgr).Named("pods").For(&corev1.Pod{}).
		Complete(mcreconcile.Func(func(context.Context, mcreconcile.Request) (reconcile.Result, error) {
			return reconcile.Result{}, nil
		}))
	if err != nil {
		os.Exit(1)
	}
	if err := mgr.Start(ctx); err != nil {
		os.Exit(1)
	}
}
