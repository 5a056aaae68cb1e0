package gardener_test

import (
	"context"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"

	mcr "mcr.dev/core"
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
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	mgr, err := mcr.NewManager(garden, provider, mcr.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	err = mcr.NewControllerManagedBy(mgr).
		Named("configmaps").
		For(&corev1.ConfigMap{}).
		Complete(mcr.Func(func(ctx context.Context, req mcr.Request) (mcr.Result, error) {
			// req.ClusterName is "<project namespace>/<shoot>", e.g. "garden-dev/my-shoot".
			mcr.LoggerFrom(ctx).Info("Reconciling", "cluster", req.ClusterName, "configmap", req.NamespacedName)
			return mcr.Result{}, nil
		}))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := mgr.Start(mcr.SetupSignalHandler()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// On a seed, engage the shoot control planes it hosts, with the kubeconfig gardenlet keeps in the
// Secret "gardener" of each control-plane namespace; token renewals re-engage.
func Example_seed() {
	provider, err := gardener.New(mcr.GetConfigOrDie(), gardener.Options{Topology: gardener.TopologySeed})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	_ = provider // hand it to mcr.NewManager
}

// Serve production Shoots only, request two-hour credentials and renew them at half their
// lifetime, and disengage Shoots whose API server Gardener does not report available.
func Example_options() {
	provider, err := gardener.New(mcr.GetConfigOrDie(), gardener.Options{
		Selector:          labels.SelectorFromSet(labels.Set{"env": "prod"}),
		ExpirationSeconds: 7200,
		RefreshFraction:   0.5,
		IsUsable: func(ctx context.Context, shoot *gardencorev1beta1.Shoot) bool {
			for _, c := range shoot.Status.Conditions {
				if c.Type == gardencorev1beta1.ShootAPIServerAvailable && c.Status != gardencorev1beta1.ConditionTrue {
					return false
				}
			}
			return gardener.ShootUsable(ctx, shoot)
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
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
