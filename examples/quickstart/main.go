// Command quickstart is the smallest uniform multi-cluster controller: it labels every
// ConfigMap of the "demo" namespace, in every cluster of the fleet, with the name of the cluster
// it was found in.
//
// By default it starts an embedded fleet of three local clusters (real kube-apiservers sharing
// one etcd, see mcr.dev/core/envtest), reconciles across it, prints what it reconciled where and
// exits. `make demo` runs it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	mcr "mcr.dev/core"
	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/clusters"
)

const (
	namespace = "demo"
	label     = "mcr.dev/reconciled-in"
)

func main() {
	members := flag.Int("clusters", 3, "number of clusters in the embedded fleet")
	timeout := flag.Duration("timeout", 3*time.Minute, "give up after this long")
	flag.Parse()
	log.SetLogger(logr.Discard())

	ctx, cancel := context.WithTimeout(mcr.SetupSignalHandler(), *timeout)
	defer cancel()
	if err := run(ctx, *members); err != nil {
		fmt.Fprintln(os.Stderr, "demo failed:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, n int) error {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("fleet-%c", 'a'+i)
	}
	fmt.Printf("Starting an embedded fleet of %d clusters (kube-apiserver %s, one shared etcd)...\n", n, envtest.KubernetesVersion)
	started := time.Now()
	fleet, err := envtest.Start(ctx, envtest.Options{Members: names})
	if err != nil {
		return err
	}
	defer func() { _ = fleet.Stop() }()
	fmt.Printf("Fleet up in %s.\n", time.Since(started).Round(100*time.Millisecond))

	// Something to reconcile: one ConfigMap per cluster, created directly, not through mcr.
	for _, m := range fleet.Members() {
		if err := seed(ctx, m); err != nil {
			return err
		}
	}

	// The manager runs in the first cluster; the provider serves all of them.
	provider := clusters.New(clusters.Options{})
	mgr, err := mcr.NewManager(fleet.Members()[0].Config(), provider, mcr.Options{
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		return err
	}

	var mu sync.Mutex
	reconciled := map[mcr.ClusterName]string{}
	err = mcr.NewControllerManagedBy(mgr).
		Named("configmap-labeller").
		For(&corev1.ConfigMap{}).
		Complete(mcr.Func(func(ctx context.Context, req mcr.Request) (mcr.Result, error) {
			if req.Namespace != namespace {
				return mcr.Result{}, nil
			}
			cl, err := mgr.GetCluster(ctx, req.ClusterName)
			if err != nil {
				return mcr.Result{}, err
			}
			cm := &corev1.ConfigMap{}
			if err := cl.GetClient().Get(ctx, req.NamespacedName, cm); err != nil {
				return mcr.Result{}, client.IgnoreNotFound(err)
			}
			if cm.Labels[label] != string(req.ClusterName) {
				if cm.Labels == nil {
					cm.Labels = map[string]string{}
				}
				cm.Labels[label] = string(req.ClusterName)
				if err := cl.GetClient().Update(ctx, cm); err != nil {
					return mcr.Result{}, err
				}
				fmt.Printf("  reconciled ConfigMap %s in cluster %s: labelled %s=%s\n", req.NamespacedName, req.ClusterName, label, req.ClusterName)
			}
			mu.Lock()
			reconciled[req.ClusterName] = cm.Data["greeting"]
			mu.Unlock()
			return mcr.Result{}, nil
		}))
	if err != nil {
		return err
	}

	mgrCtx, stopManager := context.WithCancel(ctx)
	defer stopManager()
	mgrDone := make(chan error, 1)
	go func() { mgrDone <- mgr.Start(mgrCtx) }()

	// Discovery: here the clusters come from the embedded fleet; a real deployment uses a
	// provider that watches kubeconfig Secrets, files, Cluster API, ClusterProfiles, ...
	for _, m := range fleet.Members() {
		cl, err := cluster.New(m.Config())
		if err != nil {
			return err
		}
		if err := provider.Add(ctx, multicluster.ClusterName(m.Name()), cl); err != nil {
			return fmt.Errorf("adding cluster %s: %w", m.Name(), err)
		}
		fmt.Printf("Engaged cluster %s (%s)\n", m.Name(), m.Host())
	}

	// Done when every cluster's ConfigMap carries its label, checked directly in each cluster.
	for {
		missing, err := unlabelled(ctx, fleet)
		if err != nil {
			return err
		}
		if len(missing) == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("clusters %v were not reconciled: %w", missing, ctx.Err())
		case err := <-mgrDone:
			return fmt.Errorf("manager stopped early: %w", err)
		case <-time.After(100 * time.Millisecond):
		}
	}

	mu.Lock()
	fmt.Printf("\nReconciled %d clusters:\n", len(reconciled))
	clusterNames := make([]string, 0, len(reconciled))
	for name := range reconciled {
		clusterNames = append(clusterNames, string(name))
	}
	sort.Strings(clusterNames)
	for _, name := range clusterNames {
		fmt.Printf("  %-8s %s/greeting  %q\n", name, namespace, reconciled[mcr.ClusterName(name)])
	}
	mu.Unlock()

	stopManager()
	if err := <-mgrDone; err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	fmt.Println("Done.")
	return nil
}

func seed(ctx context.Context, m *envtest.Member) error {
	c, err := client.New(m.Config(), client.Options{})
	if err != nil {
		return err
	}
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		return fmt.Errorf("seeding %s: %w", m.Name(), err)
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "greeting"},
		Data:       map[string]string{"greeting": "hello from " + m.Name()},
	}
	if err := c.Create(ctx, cm); err != nil {
		return fmt.Errorf("seeding %s: %w", m.Name(), err)
	}
	return nil
}

// unlabelled returns the members whose ConfigMap does not carry its cluster's label yet.
func unlabelled(ctx context.Context, fleet *envtest.Fleet) ([]string, error) {
	var missing []string
	for _, m := range fleet.Members() {
		c, err := client.New(m.Config(), client.Options{})
		if err != nil {
			return nil, err
		}
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: "greeting"}, cm); err != nil {
			return nil, err
		}
		if cm.Labels[label] != m.Name() {
			missing = append(missing, m.Name())
		}
	}
	return missing, nil
}
