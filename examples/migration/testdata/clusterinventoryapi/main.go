// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// multicluster-runtime v0.24.1's cluster-inventory-api provider as its example uses it: the
// operator's access providers from -clusterprofile-provider-file, New with the credentials
// strategy (or the Secret strategy), the manager on the hub, SetupWithManager, an index and a
// controller over the ClusterProfiles' clusters.
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
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterinventoryv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/cluster-inventory-api/pkg/access"

	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"
	clusterinventoryapi "sigs.k8s.io/multicluster-runtime/providers/cluster-inventory-api"
	"sigs.k8s.io/multicluster-runtime/providers/cluster-inventory-api/kubeconfigstrategy"
)

func init() {
	runtime.Must(clusterinventoryv1alpha1.AddToScheme(scheme.Scheme))
}

func main() {
	credentialsProviderFile := access.SetupProviderFileFlag()
	consumer := flag.String("secret-consumer", "", "Use the Secret strategy with this consumer name instead of access providers.")
	flag.Parse()
	ctrllog.SetLogger(zap.New(zap.UseDevMode(true)))
	log := ctrllog.Log.WithName("entrypoint")
	ctx := ctrl.SetupSignalHandler()

	strategy := kubeconfigstrategy.Option{}
	if *consumer != "" {
		strategy.Secret = &kubeconfigstrategy.SecretStrategyOption{ConsumerName: *consumer}
		log.Info("reading kubeconfig Secrets", "labels", []string{
			kubeconfigstrategy.SecretLabelKeyClusterInventoryConsumer,
			kubeconfigstrategy.SecretLabelKeyClusterProfile,
		}, "key", kubeconfigstrategy.SecretDataKeyKubeConfig)
	} else {
		credentialsProvider, err := access.NewFromFile(*credentialsProviderFile)
		if err != nil {
			log.Error(err, "reading the access provider file")
			os.Exit(1)
		}
		strategy.CredentialsProvider = &kubeconfigstrategy.CredentialsProviderOption{Provider: credentialsProvider}
	}

	provider, err := clusterinventoryapi.New(clusterinventoryapi.Options{
		KubeconfigStrategyOption: strategy,
		ClusterOptions:           []cluster.Option{func(o *cluster.Options) { o.Scheme = scheme.Scheme }},
		IsReady: func(_ context.Context, clp *clusterinventoryv1alpha1.ClusterProfile) bool {
			for _, c := range clp.Status.Conditions {
				if c.Type == clusterinventoryv1alpha1.ClusterConditionControlPlaneHealthy {
					return c.Status == "True"
				}
			}
			return false
		},
	})
	if err != nil {
		log.Error(err, "unable to create provider")
		os.Exit(1)
	}
	var _ multicluster.Provider = provider

	mgr, err := mcmanager.New(ctrl.GetConfigOrDie(), provider, mcmanager.Options{
		LeaderElection: false,
		Metrics:        metricsserver.Options{BindAddress: "0"},
	})
	if err != nil {
		log.Error(err, "unable to set up the manager")
		os.Exit(1)
	}
	if err := provider.IndexField(ctx, &corev1.ConfigMap{}, "data.owner", func(o client.Object) []string {
		return []string{o.(*corev1.ConfigMap).Data["owner"]}
	}); err != nil {
		log.Error(err, "unable to add an index")
		os.Exit(1)
	}
	if err := provider.SetupWithManager(mgr); err != nil {
		log.Error(err, "unable to set up the provider with the manager")
		os.Exit(1)
	}

	err = mcbuilder.ControllerManagedBy(mgr).
		Named("multicluster-configmaps").
		For(&corev1.ConfigMap{}).
		Complete(mcreconcile.Func(func(ctx context.Context, req mcreconcile.Request) (ctrl.Result, error) {
			cl, err := provider.Get(ctx, req.ClusterName)
			if err != nil {
				return reconcile.Result{}, err
			}
			cm := &corev1.ConfigMap{}
			if err := cl.GetClient().Get(ctx, req.NamespacedName, cm); err != nil {
				if apierrors.IsNotFound(err) {
					return reconcile.Result{}, nil
				}
				return reconcile.Result{}, err
			}
			ctrllog.FromContext(ctx).Info("ConfigMap in cluster", "cluster", req.ClusterName, "configmap", cm.Namespace+"/"+cm.Name)
			return ctrl.Result{}, nil
		}))
	if err != nil {
		log.Error(err, "failed to build controller")
		os.Exit(1)
	}
	if err := mgr.Start(ctx); err != nil && !errors.Is(err, context.Canceled) {
		log.Error(err, "unable to start")
		os.Exit(1)
	}
}
