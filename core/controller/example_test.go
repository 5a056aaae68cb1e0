// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package controller_test

import (
	"context"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	mccontroller "mcr.dev/core/controller"
	mchandler "mcr.dev/core/handler"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/clusters"
	mcreconcile "mcr.dev/core/reconcile"
	mcsource "mcr.dev/core/source"
)

// Without the builder: a controller added to the manager, watching ConfigMaps in every cluster
// the provider engages. The manager starts it and engages it with each cluster.
func ExampleNew() {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		os.Exit(1)
	}
	mgr, err := mcmanager.New(cfg, clusters.New(clusters.Options{}), mcmanager.Options{})
	if err != nil {
		os.Exit(1)
	}
	c, err := mccontroller.New("configmaps", mgr, mccontroller.Options{
		Reconciler: mcreconcile.Func(func(ctx context.Context, req mcreconcile.Request) (reconcile.Result, error) {
			cl, err := mgr.GetCluster(ctx, req.ClusterName)
			if err != nil {
				return reconcile.Result{}, err
			}
			var cm corev1.ConfigMap
			return reconcile.Result{}, cl.GetClient().Get(ctx, req.NamespacedName, &cm)
		}),
	})
	if err != nil {
		os.Exit(1)
	}
	if err := c.MultiClusterWatch(mcsource.Kind(&corev1.ConfigMap{}, mchandler.TypedEnqueueRequestForObject[*corev1.ConfigMap]())); err != nil {
		os.Exit(1)
	}
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		os.Exit(1)
	}
}

// channelPerCluster is a multi-cluster source fed by code: every engaged cluster gets the
// channel of its name.
type channelPerCluster map[multicluster.ClusterName]chan event.GenericEvent

func (c channelPerCluster) ForCluster(name multicluster.ClusterName, cl cluster.Cluster) (source.TypedSource[mcreconcile.Request], bool, error) {
	perCluster := mchandler.Lift(&handler.EnqueueRequestForObject{})(name, cl)
	return source.TypedChannel(c[name], perCluster), true, nil
}

// An unmanaged controller is started and engaged by its caller. Engaging a cluster starts the
// controller's sources for it; its events become requests that name the cluster.
func ExampleNewUnmanaged() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// Building a manager or a cluster does not reach an apiserver; only starting them does.
	mgr, err := mcmanager.New(&rest.Config{Host: "https://host.example:6443"}, nil, mcmanager.Options{})
	if err != nil {
		panic(err)
	}
	reconciled := make(chan struct{})
	c, err := mccontroller.NewUnmanaged("printer", mgr, mccontroller.Options{
		SkipNameValidation: ptr.To(true),
		Reconciler: mcreconcile.Func(func(_ context.Context, req mcreconcile.Request) (reconcile.Result, error) {
			fmt.Println("reconcile", req)
			close(reconciled)
			return reconcile.Result{}, nil
		}),
	})
	if err != nil {
		panic(err)
	}
	events := channelPerCluster{"eu-west": make(chan event.GenericEvent)}
	if err := c.MultiClusterWatch(events); err != nil {
		panic(err)
	}
	go func() { _ = c.Start(ctx) }()

	euWest, err := cluster.New(&rest.Config{Host: "https://eu-west.example:6443"})
	if err != nil {
		panic(err)
	}
	// A provider does this; canceling the context disengages the cluster.
	if err := c.Engage(ctx, "eu-west", euWest); err != nil {
		panic(err)
	}
	events["eu-west"] <- event.GenericEvent{Object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "prices"}}}
	<-reconciled
	// Output: reconcile cluster://eu-west/shop/prices
}
