// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Command gardener runs a multi-cluster controller over the shoot clusters of a Gardener
// landscape, with the gardener provider (mcr.dev/providers/gardener). Two topologies:
//
//   - garden (default): the manager runs against the garden cluster; every usable Shoot of the
//     watched project namespaces is a cluster named <namespace>/<shoot>, reached with short-lived
//     admin credentials from its adminkubeconfig subresource, renewed before they expire.
//   - seed: the manager runs against a seed cluster; every shoot control plane the seed hosts
//     (an extensions.gardener.cloud Cluster object) is a cluster named after its technical ID,
//     shoot--<project>--<shoot>, reached with the kubeconfig in the Secret "gardener" of its
//     control-plane namespace, following token renewals.
//
// The controller (controller.go) annotates every
// ConfigMap labeled mcr.dev/example=true, in every shoot, with the cluster's name.
//
//	go run ./providers/gardener -kubeconfig ~/.kube/garden.kubeconfig -namespaces garden-dev
//	go run ./providers/gardener -kubeconfig ~/.kube/seed.kubeconfig -topology seed -selector team=a
//
// The RBAC each topology needs is in providers/gardener/config (rbac-garden.yaml, rbac-seed.yaml).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	mcr "mcr.dev/core"
	"mcr.dev/core/clusters"
	"mcr.dev/core/providers/kit"
	"mcr.dev/providers/gardener"
)

// leaderElectionID is the default name of the leader election Lease.
const leaderElectionID = "gardener-provider.examples.mcr.dev"

func main() {
	if err := run(mcr.SetupSignalHandler(), os.Args[1:]); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("gardener", flag.ContinueOnError)
	common := bindManagerFlags(fs, leaderElectionID)
	topology := fs.String("topology", string(gardener.TopologyGarden), "what -kubeconfig points at: garden (Shoots, admin credentials per Shoot) or seed (shoot control planes, Secret \"gardener\" per shoot)")
	namespaces := fs.String("namespaces", "", "comma-separated project namespaces (garden-<project>) whose Shoots are served (default: all)")
	selector := fs.String("selector", "", "label selector on Shoots, e.g. team=a,purpose!=evaluation (default: every Shoot)")
	expiration := fs.Duration("expiration", time.Duration(gardener.DefaultExpirationSeconds)*time.Second,
		"lifetime requested for admin credentials in the garden topology (at least 10m); they are renewed after 80% of it")
	syncTimeout := fs.Duration("cache-sync-timeout", clusters.DefaultCacheSyncTimeout, "how long a shoot may take to answer and sync before it is retried")
	maxRetry := fs.Duration("retry-max-delay", gardener.DefaultRetryMaxDelay, "longest backoff between attempts to engage a shoot that failed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	common.SetupLogging()
	host, err := common.HostConfig()
	if err != nil {
		return err
	}

	// snippet:begin gardener-provider
	opts := gardener.Options{
		Topology:          gardener.Topology(*topology),
		Namespaces:        splitList(*namespaces),
		ExpirationSeconds: int64(expiration.Seconds()),
		// IsReady stays nil: ShootUsable in the garden (created, awake, API server not down),
		// ShootAwake on a seed, whose copy of the Shoot's status may be stale.
		Options: kit.Options{CacheSyncTimeout: *syncTimeout, RetryMaxDelay: *maxRetry},
	}
	if *selector != "" {
		if opts.Selector, err = labels.Parse(*selector); err != nil {
			return fmt.Errorf("parsing -selector: %w", err)
		}
	}
	// The provider watches the garden or seed with a cache of its own that holds only what it
	// reads (Shoots, or Cluster objects and the Secrets named "gardener"); New validates the
	// topology and the expiration.
	provider, err := gardener.New(host, opts)
	if err != nil {
		return fmt.Errorf("creating the gardener provider: %w", err)
	}
	mgr, err := mcr.NewManager(host, provider, common.ManagerOptions())
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	// snippet:end gardener-provider

	if err := errors.Join(addHealthChecks(mgr), setupMarker(mgr)); err != nil {
		return err
	}
	mcr.Log.Info("Starting", "topology", *topology, "namespaces", *namespaces, "selector", *selector)
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("running the manager: %w", err)
	}
	return nil
}

// splitList splits a comma-separated flag value, dropping empty entries.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
