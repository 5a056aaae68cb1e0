// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// multicluster-runtime v0.24.1's Cluster API provider as its example uses it: New with the
// Cluster type to watch, a readiness check and options for the workload clusters, the manager
// on the management cluster (Secrets left out of its cache), SetupWithManager, an index and a
// controller over the workload clusters, named "<namespace>/<name>" after their Clusters.
package main

import (
	"context"
	"errors"
	"flag"
	"os"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager/signals"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	capiv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // older management clusters serve v1beta1 only.
	capiv1beta2 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"
	capi "sigs.k8s.io/multicluster-runtime/providers/cluster-api"
)

func init() {
	runtime.Must(capiv1beta1.AddToScheme(scheme.Scheme))
	runtime.Must(capiv1beta2.AddToScheme(scheme.Scheme))
}

func main() {
	v1beta1 := flag.Bool("v1beta1", false, "Watch v1beta1 Clusters (Cluster API older than v1.11).")
	flag.Parse()
	ctrllog.SetLogger(zap.New(zap.UseDevMode(true)))
	log := ctrllog.Log.WithName("entrypoint")
	ctx := signals.SetupSignalHandler()

	cfg, err := ctrl.GetConfig()
	if err != nil {
		log.Error(err, "unable to get kubeconfig")
		os.Exit(1)
	}

	opts := capi.Options{
		ClusterOptions: []cluster.Option{func(o *cluster.Options) { o.Scheme = scheme.Scheme }},
	}
	if *v1beta1 {
		opts.ObjectToWatch = &capiv1beta1.Cluster{}
		opts.IsReady = func(_ context.Context, obj client.Object) bool {
			c, ok := obj.(*capiv1beta1.Cluster)
			return ok && c.Status.ControlPlaneReady
		}
	}
	provider := capi.New(opts)
	var _ multicluster.Provider = provider

	mgr, err := mcmanager.New(cfg, provider, mcmanager.Options{
		Client: client.Options{
			Cache: &client.CacheOptions{
				Unstructured: true,
				DisableFor:   []client.Object{&corev1.Secret{}},
			},
		},
		Metrics: metricsserver.Options{BindAddress: "0"},
	})
	if err != nil {
		log.Error(err, "unable to set up multi-cluster manager")
		os.Exit(1)
	}

	// Indexes reach every workload cluster, also those engaged later.
	if err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.ConfigMap{}, "data.owner", func(obj client.Object) []string {
		return []string{obj.(*corev1.ConfigMap).Data["owner"]}
	}); err != nil {
		log.Error(err, "unable to add the index")
		os.Exit(1)
	}

	if err := provider.SetupWithManager(mgr); err != nil {
		log.Error(err, "unable to set up provider")
		os.Exit(1)
	}

	if err := mcbuilder.ControllerManagedBy(mgr).
		Named("multicluster-configmaps").
		For(&corev1.ConfigMap{}).
		Complete(mcreconcile.Func(func(ctx context.Context, req mcreconcile.Request) (ctrl.Result, error) {
			log := ctrllog.FromContext(ctx).WithValues("cluster", req.ClusterName)
			cl, err := provider.Get(ctx, req.ClusterName)
			if err != nil {
				return reconcile.Result{}, err
			}
			cm := &corev1.ConfigMap{}
			if err := cl.GetClient().Get(ctx, req.Request.NamespacedName, cm); err != nil {
				if apierrors.IsNotFound(err) {
					return reconcile.Result{}, nil
				}
				return reconcile.Result{}, err
			}
			var owned corev1.ConfigMapList
			if err := cl.GetCache().List(ctx, &owned, client.MatchingFields{"data.owner": cm.Data["owner"]}); err != nil {
				return reconcile.Result{}, err
			}
			log.Info("ConfigMap found", "namespace", cm.Namespace, "name", cm.Name,
				"sameOwner", len(owned.Items), "workloadClusters", provider.ListClusters())
			return ctrl.Result{}, nil
		})); err != nil {
		log.Error(err, "failed to build controller")
		os.Exit(1)
	}

	if err := mgr.Start(ctx); err != nil && !errors.Is(err, context.Canceled) {
		log.Error(err, "unable to start manager")
		os.Exit(1)
	}
}
