// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package gardener_test

import (
	"context"
	"fmt"
	"log"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	mcr "mcr.dev/core"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
	"mcr.dev/providers/gardener"
)

// Run a controller over every usable Shoot of a Gardener landscape: the provider watches the
// garden cluster, engages each Shoot with short-lived admin credentials from its adminkubeconfig
// subresource, and renews them before they expire. The manager's own cluster can be any cluster;
// here it is the garden too.
func Example() {
	garden := mcr.GetConfigOrDie() // a kubeconfig for the garden cluster (the Gardener API)
	provider, err := gardener.New(garden, gardener.Options{
		Namespaces: []string{"garden-dev"}, // the project namespaces to serve
	})
	if err != nil {
		log.Fatal(err)
	}
	mgr, err := mcr.NewManager(garden, provider, mcr.Options{})
	if err != nil {
		log.Fatal(err)
	}
	// Build controllers on mgr as in mcr's Example (mcr.dev/core). A request's ClusterName is
	// "<project namespace>/<shoot>", e.g. "garden-dev/my-shoot"; ClusterKey gives the Shoot's key.
	if err := mgr.Start(mcr.SetupSignalHandler()); err != nil {
		log.Fatal(err)
	}
}

// On a seed, engage the shoot control planes it hosts, with the kubeconfig gardenlet keeps in the
// Secret "gardener" of each control-plane namespace; token renewals re-engage.
func Example_seed() {
	provider, err := gardener.New(mcr.GetConfigOrDie(), gardener.Options{Topology: gardener.TopologySeed})
	if err != nil {
		log.Fatal(err)
	}
	_ = provider // hand it to mcr.NewManager
}

// On a seed, share the manager's own cluster with the provider instead of informers of its own:
// the manager runs against the seed with the extensions Cluster type in its scheme and a cache
// that holds only the Secrets named "gardener", and the provider reads through it.
func ExampleNewForHost() {
	scheme := runtime.NewScheme()
	sb := runtime.NewSchemeBuilder(clientgoscheme.AddToScheme, extensionsv1alpha1.AddToScheme)
	if err := sb.AddToScheme(scheme); err != nil {
		log.Fatal(err)
	}
	local, err := manager.New(mcr.GetConfigOrDie(), manager.Options{
		Scheme: scheme,
		Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{
			&corev1.Secret{}: {Field: fields.OneTermEqualSelector("metadata.name", gardener.SeedSecretName)},
		}},
	})
	if err != nil {
		log.Fatal(err)
	}
	provider, err := gardener.NewForHost(local, gardener.Options{Topology: gardener.TopologySeed})
	if err != nil {
		log.Fatal(err)
	}
	mgr, err := mcmanager.WithMultiCluster(local, provider)
	if err != nil {
		log.Fatal(err)
	}
	_ = mgr // add controllers, then mgr.Start; mgr.GetLocalManager() is local
}

// Serve production Shoots only, request two-hour credentials and renew them at half their
// lifetime, and disengage Shoots whose API server Gardener does not report available.
func Example_options() {
	provider, err := gardener.New(mcr.GetConfigOrDie(), gardener.Options{
		Selector:          labels.SelectorFromSet(labels.Set{"env": "prod"}),
		ExpirationSeconds: 7200,
		RefreshFraction:   0.5,
		IsReady: func(ctx context.Context, shoot *gardencorev1beta1.Shoot) bool {
			for _, c := range shoot.Status.Conditions {
				if c.Type == gardencorev1beta1.ShootAPIServerAvailable && c.Status != gardencorev1beta1.ConditionTrue {
					return false
				}
			}
			return gardener.ShootUsable(ctx, shoot)
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	_ = provider // hand it to mcr.NewManager
}

// Cluster names: "<namespace>/<shoot>" in the garden topology, the control-plane namespace in
// the seed topology; ClusterKey maps both back to their objects.
func ExampleClusterKey() {
	for _, name := range []multicluster.ClusterName{
		gardener.ShootClusterName("garden-dev", "my-shoot"),
		gardener.SeedClusterName("shoot--dev--my-shoot"),
	} {
		key, err := gardener.ClusterKey(name)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%s -> namespace %q, name %q\n", name, key.Namespace, key.Name)
	}
	// Output:
	// garden-dev/my-shoot -> namespace "garden-dev", name "my-shoot"
	// shoot--dev--my-shoot -> namespace "", name "shoot--dev--my-shoot"
}
