// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// multicluster-runtime v0.24.1's file provider as its examples use it (file and
// sync-local-to-remote): New with kubeconfig files, directories, the patterns of the files in
// them and options for every cluster, the manager on a local cluster, one controller on the local
// cluster that pushes labeled ConfigMaps to every cluster of the files (ClusterNames, Get), and
// one on the clusters of the files that pulls them back in line.
package main

import (
	"context"
	"errors"
	"flag"
	"maps"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager/signals"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"
	"sigs.k8s.io/multicluster-runtime/providers/file"
)

func main() {
	localKubeconfig := flag.String("local-kubeconfig", "", "Path to the kubeconfig of the local cluster.")
	files := flag.String("kubeconfigs", "", "Comma-separated kubeconfig files of the remote clusters.")
	dirs := flag.String("kubeconfig-dirs", "", "Comma-separated directories of kubeconfig files.")
	globs := flag.String("globs", "", "Comma-separated patterns of the files in those directories.")
	flag.Parse()
	ctrllog.SetLogger(zap.New(zap.UseDevMode(true)))
	log := ctrllog.Log.WithName("entrypoint")
	ctx := signals.SetupSignalHandler()

	localCfg, err := clientcmd.BuildConfigFromFlags("", *localKubeconfig)
	if err != nil {
		log.Error(err, "building the local config")
		os.Exit(1)
	}

	// The remote clusters need only ConfigMaps.
	remoteScheme := runtime.NewScheme()
	if err := corev1.AddToScheme(remoteScheme); err != nil {
		log.Error(err, "building the remote scheme")
		os.Exit(1)
	}
	patterns := split(*globs)
	if len(patterns) == 0 {
		patterns = file.DefaultKubeconfigGlobs
	}
	provider, err := file.New(file.Options{
		KubeconfigFiles: split(*files),
		KubeconfigDirs:  split(*dirs),
		KubeconfigGlobs: patterns,
		Separator:       "+",
		ClusterOptions: []cluster.Option{func(o *cluster.Options) {
			o.Scheme = remoteScheme
		}},
	})
	if err != nil {
		log.Error(err, "creating the provider")
		os.Exit(1)
	}
	var _ multicluster.ProviderRunnable = provider

	mgr, err := mcmanager.New(localCfg, provider, mcmanager.Options{Scheme: remoteScheme})
	if err != nil {
		log.Error(err, "creating the manager")
		os.Exit(1)
	}

	labeled, err := predicate.LabelSelectorPredicate(metav1.LabelSelector{
		MatchLabels: map[string]string{"example.io/propagate": "true"},
	})
	if err != nil {
		log.Error(err, "building the predicate")
		os.Exit(1)
	}
	local := mgr.GetLocalManager()

	if err := mcbuilder.ControllerManagedBy(mgr).
		Named("local").
		For(&corev1.ConfigMap{}, mcbuilder.WithEngageWithLocalCluster(true)).
		WithEventFilter(labeled).
		Complete(push(local, provider)); err != nil {
		log.Error(err, "building the local controller")
		os.Exit(1)
	}
	if err := mcbuilder.ControllerManagedBy(mgr).
		Named("remote").
		For(&corev1.ConfigMap{}, mcbuilder.WithEngageWithProviderClusters(true)).
		WithEventFilter(labeled).
		Complete(pull(local, provider)); err != nil {
		log.Error(err, "building the remote controller")
		os.Exit(1)
	}

	if err := mgr.Start(ctx); err != nil && !errors.Is(err, context.Canceled) {
		log.Error(err, "running the manager")
		os.Exit(1)
	}
}

// push copies a local ConfigMap to every remote cluster, or deletes it there when it is gone.
func push(local cluster.Cluster, provider *file.Provider) mcreconcile.Func {
	return func(ctx context.Context, req mcreconcile.Request) (ctrl.Result, error) {
		cm := &corev1.ConfigMap{}
		err := local.GetClient().Get(ctx, req.Request.NamespacedName, cm)
		if err != nil && !apierrors.IsNotFound(err) {
			return reconcile.Result{}, err
		}
		gone := apierrors.IsNotFound(err)
		var errs error
		for _, name := range provider.ClusterNames() {
			cl, err := provider.Get(ctx, name)
			if err != nil {
				errs = errors.Join(errs, err)
				continue
			}
			remote := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: req.Request.Namespace, Name: req.Request.Name}}
			if gone {
				if err := cl.GetClient().Delete(ctx, remote); err != nil && !apierrors.IsNotFound(err) {
					errs = errors.Join(errs, err)
				}
				continue
			}
			err = cl.GetClient().Get(ctx, req.Request.NamespacedName, remote)
			switch {
			case apierrors.IsNotFound(err):
				remote.Labels, remote.Data = cm.Labels, cm.Data
				errs = errors.Join(errs, cl.GetClient().Create(ctx, remote))
			case err != nil:
				errs = errors.Join(errs, err)
			case !maps.Equal(remote.Data, cm.Data):
				remote.Data = cm.Data
				errs = errors.Join(errs, cl.GetClient().Update(ctx, remote))
			}
		}
		return ctrl.Result{}, errs
	}
}

// pull reverts a remote ConfigMap to the local one, or deletes it when there is none.
func pull(local cluster.Cluster, provider *file.Provider) mcreconcile.Func {
	return func(ctx context.Context, req mcreconcile.Request) (ctrl.Result, error) {
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
		localCM := &corev1.ConfigMap{}
		err = local.GetClient().Get(ctx, req.Request.NamespacedName, localCM)
		switch {
		case apierrors.IsNotFound(err):
			return reconcile.Result{}, cl.GetClient().Delete(ctx, cm)
		case err != nil:
			return reconcile.Result{}, err
		case maps.Equal(localCM.Data, cm.Data):
			return reconcile.Result{}, nil
		}
		cm.Data = localCM.Data
		return reconcile.Result{}, cl.GetClient().Update(ctx, cm)
	}
}

func split(list string) []string {
	if list == "" {
		return nil
	}
	return strings.Split(list, ",")
}
