// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	mcr "mcr.dev/core"
	"mcr.dev/core/fleet"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/clusters"
)

// Which clusters still run image v1.2? A field index added through the manager reaches every
// engaged cluster's cache; one List asks them all.
func Example() {
	ctx := mcr.SetupSignalHandler()
	mgr, err := mcmanager.New(mcr.GetConfigOrDie(), clusters.New(), mcmanager.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Every cluster, present and future, indexes its Deployments by container image.
	err = mgr.GetFieldIndexer().IndexField(ctx, &appsv1.Deployment{}, "image", func(obj client.Object) []string {
		var images []string
		for _, c := range obj.(*appsv1.Deployment).Spec.Template.Spec.Containers {
			images = append(images, c.Image)
		}
		return images
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	reader, err := fleet.New(mgr, fleet.Options{CheckReachable: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}

	// Once the manager runs: in a runnable, a reconciler, an HTTP handler.
	report := func(ctx context.Context) error {
		items, err := fleet.ListItems[*appsv1.Deployment](ctx, reader, &appsv1.DeploymentList{},
			client.MatchingFields{"image": "registry.example/web:v1.2"})
		if partial, ok := errors.AsType[*fleet.PartialError](err); ok {
			// The other clusters' Deployments are in items.
			fmt.Println("could not read:", partial.Failed())
		} else if err != nil {
			return err
		}
		for _, item := range items {
			fmt.Println(item.Cluster, item.Object.Namespace, item.Object.Name)
		}
		return nil
	}
	if err := mgr.Add(manager.RunnableFunc(report)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := mgr.Start(ctx); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// A dashboard keeps the ConfigMaps of every engaged cluster, current through one handler. It
// keeps them as sets: a cluster engaged again (new credentials) is announced again with adds.
// A disengaged cluster is heard of no more; show only the clusters in mgr.EngagedClusters().
func ExampleReader_AddEventHandler() {
	ctx := context.Background()
	reader := readerFromSomewhere()
	var mu sync.Mutex // for the dashboard's readers: the handler's calls are serial
	configMaps := map[multicluster.ClusterName]map[client.ObjectKey]bool{}
	reg, err := reader.AddEventHandler(ctx, &corev1.ConfigMap{}, fleet.HandlerFuncs{
		AddFunc: func(cluster multicluster.ClusterName, obj client.Object, _ bool) {
			mu.Lock()
			defer mu.Unlock()
			if configMaps[cluster] == nil {
				configMaps[cluster] = map[client.ObjectKey]bool{}
			}
			configMaps[cluster][client.ObjectKeyFromObject(obj)] = true
		},
		DeleteFunc: func(cluster multicluster.ClusterName, obj client.Object) {
			mu.Lock()
			defer mu.Unlock()
			delete(configMaps[cluster], client.ObjectKeyFromObject(obj))
		},
	})
	if err != nil {
		// The clusters the *fleet.PartialError names get the handler once they can.
		fmt.Fprintln(os.Stderr, err)
	}
	defer reg.Remove()
}

func readerFromSomewhere() *fleet.Reader {
	mgr, err := mcmanager.New(mcr.GetConfigOrDie(), clusters.New(), mcmanager.Options{})
	if err != nil {
		os.Exit(1)
	}
	reader, err := fleet.New(mgr, fleet.Options{})
	if err != nil {
		os.Exit(1)
	}
	return reader
}
