// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Command quickstart is the smallest uniform multi-cluster controller: it marks every ConfigMap
// of the "demo" namespace, in every cluster of the fleet, with the name of the cluster it was
// found in (annotation mcr.dev/reconciled-in).
//
// The clusters are discovered through kubeconfig files by the file provider
// (mcr.dev/providers/file). By default the command starts an embedded fleet of three local
// clusters (real kube-apiservers sharing one etcd, see mcr.dev/core/envtest), writes one
// kubeconfig per cluster into a temporary directory and lets the provider discover them there;
// it reconciles across the fleet, prints what it reconciled where and exits. `make demo` runs it.
//
// With -kubeconfig it runs against real clusters instead, without starting anything: every
// context of the given kubeconfig files, directories or globs is a cluster. With -kind the
// clusters are those of the local kind installation (the kind provider,
// mcr.dev/providers/kind), optionally only those whose names start with -kind-prefix. Either
// way it creates the namespace "demo" and the ConfigMap demo/greeting in each cluster where they
// are missing.
//
//	go run ./quickstart -kubeconfig ~/.kube/config
//	go run ./quickstart -kubeconfig '/etc/fleet/:/etc/fleets/*/kubeconfig'
//	go run ./quickstart -kind -kind-prefix fleet-
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	kindcluster "sigs.k8s.io/kind/pkg/cluster"

	mcr "mcr.dev/core"
	"mcr.dev/core/envtest"
	"mcr.dev/core/kubeconfig"
	"mcr.dev/providers/file"
	"mcr.dev/providers/kind"
)

const (
	namespace  = "demo"
	annotation = "mcr.dev/reconciled-in"
)

func main() {
	if err := runCommand(mcr.SetupSignalHandler(), os.Args[1:]); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "demo failed:", err)
		os.Exit(1)
	}
}

// options say which fleet the quickstart runs on.
type options struct {
	// clusters is the size of the embedded fleet, used when neither kubeconfig nor kind is set.
	clusters int
	// kubeconfig lists kubeconfig files, directories and globs (the file provider).
	kubeconfig string
	// kind selects the local kind clusters whose names start with kindPrefix (the kind provider).
	kind       bool
	kindPrefix string
}

// runCommand parses the command line and runs the quickstart.
func runCommand(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("quickstart", flag.ContinueOnError)
	var o options
	fs.IntVar(&o.clusters, "clusters", 3, "number of clusters in the embedded fleet")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig files, directories or globs, separated by '"+string(os.PathListSeparator)+
		"', to run against instead of an embedded fleet (every context is a cluster)")
	fs.BoolVar(&o.kind, "kind", false, "run against the clusters of the local kind installation instead of an embedded fleet")
	fs.StringVar(&o.kindPrefix, "kind-prefix", "", "with -kind: only the kind clusters whose names start with this prefix")
	timeout := fs.Duration("timeout", 3*time.Minute, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.kind && o.kubeconfig != "" {
		return errors.New("-kind and -kubeconfig exclude each other")
	}
	log.SetLogger(logr.Discard())
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	return run(ctx, o)
}

// run seeds every cluster, runs the controller across the fleet until each cluster's ConfigMap
// is marked, and reports what it reconciled.
func run(ctx context.Context, o options) error {
	provider, configs, stop, err := openFleet(ctx, o)
	if err != nil {
		return err
	}
	defer stop()
	if len(configs) == 0 {
		return errors.New("no usable cluster found")
	}
	names := slices.Sorted(maps.Keys(configs))

	// Something to reconcile: one ConfigMap per cluster, created directly, not through mcr.
	for _, name := range names {
		if err := seed(ctx, string(name), configs[name]); err != nil {
			return err
		}
	}

	// The manager runs in the first cluster; the provider serves all of them.
	mgr, err := mcr.NewManager(configs[names[0]], provider, mcr.Options{
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		return err
	}

	// Say which clusters the provider engages, as it engages them (before the controller does).
	if err := mgr.Add(announcer{}); err != nil {
		return err
	}

	reconciled := &greetings{byCluster: map[mcr.ClusterName]string{}}
	if err := addMarker(mgr, reconciled); err != nil {
		return err
	}

	mgrCtx, stopManager := context.WithCancel(ctx)
	defer stopManager()
	mgrDone := make(chan error, 1)
	go func() { mgrDone <- mgr.Start(mgrCtx) }()

	if err := waitUntilMarked(ctx, configs, mgrDone); err != nil {
		return err
	}
	reconciled.print()

	stopManager()
	if err := <-mgrDone; err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	fmt.Println("Done.")
	return nil
}

// openFleet returns the provider that o selects and the config of every cluster it will
// engage. Unless it fails, stop releases what it started (the embedded fleet).
func openFleet(ctx context.Context, o options) (provider mcr.Provider, configs map[mcr.ClusterName]*rest.Config, stop func(), err error) {
	stop = func() {}
	if o.kind {
		// snippet:begin quickstart-kind
		// The kind provider lists the kind clusters and engages each under its kind name.
		provider = kind.New(kind.Options{Prefix: o.kindPrefix})
		// snippet:end quickstart-kind
		fmt.Printf("Using the kind clusters named %s*\n", o.kindPrefix)
		if configs, err = kindConfigs(o.kindPrefix); err != nil {
			return nil, nil, nil, err
		}
		return provider, configs, stop, nil
	}
	var opts file.Options
	if o.kubeconfig != "" {
		opts.Files, opts.Dirs, opts.Globs = file.ParsePaths(o.kubeconfig)
		// The user's own kubeconfigs: accept exec plugins and certificate files, as kubectl does.
		opts.Policy, opts.DiscoveredPolicy = file.TrustedPolicy(), file.TrustedPolicy()
		fmt.Printf("Reading kubeconfigs from %s\n", o.kubeconfig)
	} else {
		var dir string
		if dir, stop, err = embeddedFleet(ctx, o.clusters); err != nil {
			return nil, nil, nil, err
		}
		opts.Dirs = []string{dir}
	}
	// Discovery goes through the files: the provider reads them, names one cluster per
	// context (<file>+<context>) and keeps watching them while the manager runs.
	fileProvider, err := file.New(opts)
	if err != nil {
		stop()
		return nil, nil, nil, err
	}
	if configs, err = fileProvider.ReadConfigs(); err != nil {
		fmt.Fprintln(os.Stderr, "warning: some kubeconfigs are unusable and are left out:", err)
	}
	return fileProvider, configs, stop, nil
}

// greetings records, per cluster, the greeting of the ConfigMap the controller reconciled.
type greetings struct {
	mu        sync.Mutex
	byCluster map[mcr.ClusterName]string
}

func (g *greetings) record(name mcr.ClusterName, greeting string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.byCluster[name] = greeting
}

func (g *greetings) print() {
	g.mu.Lock()
	defer g.mu.Unlock()
	fmt.Printf("\nReconciled %d clusters:\n", len(g.byCluster))
	width := 0
	for name := range g.byCluster {
		width = max(width, len(name))
	}
	for _, name := range slices.Sorted(maps.Keys(g.byCluster)) {
		fmt.Printf("  %-*s  %s/greeting  %q\n", width, name, namespace, g.byCluster[name])
	}
}

// addMarker adds the controller that annotates every ConfigMap of the demo namespace with its
// cluster, and records what it reconciled in reconciled.
func addMarker(mgr mcr.Manager, reconciled *greetings) error {
	// snippet:begin quickstart-controller
	return mcr.NewControllerManagedBy(mgr).
		Named("configmap-marker").
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
			// An annotation, not a label: cluster names such as "fleet-a.kubeconfig+fleet-a" are
			// not valid label values.
			if cm.Annotations[annotation] != string(req.ClusterName) {
				if cm.Annotations == nil {
					cm.Annotations = map[string]string{}
				}
				cm.Annotations[annotation] = string(req.ClusterName)
				if err := cl.GetClient().Update(ctx, cm); err != nil {
					return mcr.Result{}, err
				}
				fmt.Printf("  reconciled ConfigMap %s in cluster %s: annotated %s=%s\n", req.NamespacedName, req.ClusterName, annotation, req.ClusterName)
			}
			reconciled.record(req.ClusterName, cm.Data["greeting"])
			return mcr.Result{}, nil
		}))
	// snippet:end quickstart-controller
}

// waitUntilMarked returns once every cluster's ConfigMap carries its annotation, checked
// directly in each cluster, or with an error when ctx ends or the manager stops first.
func waitUntilMarked(ctx context.Context, configs map[mcr.ClusterName]*rest.Config, mgrDone <-chan error) error {
	direct := map[mcr.ClusterName]client.Client{}
	for _, name := range slices.Sorted(maps.Keys(configs)) {
		c, err := client.New(configs[name], client.Options{})
		if err != nil {
			return err
		}
		direct[name] = c
	}
	for {
		missing, err := unmarked(ctx, direct)
		if err != nil {
			return err
		}
		if len(missing) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("clusters %v were not reconciled: %w", missing, ctx.Err())
		case err := <-mgrDone:
			return fmt.Errorf("manager stopped early: %w", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// announcer is a runnable that the manager engages with every cluster, like a controller; it
// prints each engagement.
type announcer struct{}

func (announcer) Engage(_ context.Context, name mcr.ClusterName, cl cluster.Cluster) error {
	fmt.Printf("Engaged cluster %s (%s)\n", name, cl.GetConfig().Host)
	return nil
}

func (announcer) Start(ctx context.Context) error {
	<-ctx.Done()
	return nil
}

// embeddedFleet starts n local clusters and writes one kubeconfig per cluster into a new
// temporary directory. stop stops the fleet and removes the directory.
func embeddedFleet(ctx context.Context, n int) (dir string, stop func(), err error) {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("fleet-%c", 'a'+i)
	}
	fmt.Printf("Starting an embedded fleet of %d clusters (kube-apiserver %s, one shared etcd)...\n", n, envtest.KubernetesVersion)
	started := time.Now()
	fleet, err := envtest.Start(ctx, envtest.Options{Members: names})
	if err != nil {
		return "", nil, err
	}
	fmt.Printf("Fleet up in %s.\n", time.Since(started).Round(100*time.Millisecond))

	dir, err = os.MkdirTemp("", "mcr-quickstart-")
	if err != nil {
		return "", nil, errors.Join(err, fleet.Stop())
	}
	stop = func() {
		_ = fleet.Stop()
		_ = os.RemoveAll(dir)
	}
	for _, m := range fleet.Members() {
		// The files hold admin credentials: readable by this user only.
		if err := os.WriteFile(filepath.Join(dir, m.Name()+".kubeconfig"), m.Kubeconfig(), 0o600); err != nil {
			stop()
			return "", nil, err
		}
	}
	fmt.Printf("Wrote %d kubeconfigs to %s; the file provider discovers the clusters there.\n", n, dir)
	return dir, stop, nil
}

// seed creates the namespace and the ConfigMap to reconcile, unless they exist.
func seed(ctx context.Context, name string, cfg *rest.Config) error {
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	// The greeting names the kubeconfig context: the part of the cluster name after the
	// first "+" (the file provider's naming scheme), or the kind cluster.
	contextName := name
	if _, after, found := strings.Cut(name, "+"); found {
		contextName = after
	}
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}},
		&corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "greeting"},
			Data:       map[string]string{"greeting": "hello from " + contextName},
		},
	}
	for _, obj := range objs {
		if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("seeding %s: %w", name, err)
		}
	}
	return nil
}

// unmarked returns the clusters whose ConfigMap does not carry its cluster's annotation yet.
func unmarked(ctx context.Context, clients map[mcr.ClusterName]client.Client) ([]mcr.ClusterName, error) {
	var missing []mcr.ClusterName
	for _, name := range slices.Sorted(maps.Keys(clients)) {
		cm := &corev1.ConfigMap{}
		if err := clients[name].Get(ctx, types.NamespacedName{Namespace: namespace, Name: "greeting"}, cm); err != nil {
			return nil, err
		}
		if cm.Annotations[annotation] != string(name) {
			missing = append(missing, name)
		}
	}
	return missing, nil
}

// kindConfigs reads the kubeconfigs of the kind clusters whose names start with prefix, through
// the kind library as the kind command line does, so that the quickstart can seed and check
// each cluster directly. The provider reads them again on its own.
func kindConfigs(prefix string) (map[mcr.ClusterName]*rest.Config, error) {
	kp := kindcluster.NewProvider()
	names, err := kp.List()
	if err != nil {
		return nil, fmt.Errorf("listing kind clusters: %w", err)
	}
	configs := map[mcr.ClusterName]*rest.Config{}
	for _, name := range names {
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		data, err := kp.KubeConfig(name, false)
		if err != nil {
			return nil, fmt.Errorf("reading the kubeconfig of kind cluster %s: %w", name, err)
		}
		cfg, err := kubeconfig.Load([]byte(data), kubeconfig.Policy{})
		if err != nil {
			return nil, fmt.Errorf("loading the kubeconfig of kind cluster %s: %w", name, err)
		}
		configs[mcr.ClusterName(name)] = cfg
	}
	return configs, nil
}
