// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Command placement runs a multi-cluster controller over the clusters a scheduler chose: the
// ClusterProfiles that a set of PlacementDecisions (KEP-5313, multicluster.x-k8s.io/v1alpha1)
// on the hub references, with the clusterprofile provider's Options.Placement
// (mcr.dev/providers/clusterprofile). The decision is selected by its decision key (all its
// slices) and/or placement key; as the scheduler adds a cluster to it, moves it or removes it,
// the cluster is engaged or disengaged. Each cluster is named <namespace>/<name> after its
// profile and reached through the operator's access providers (-clusterprofile-provider-file).
//
// The controller (controller.go) annotates every ConfigMap labeled mcr.dev/example=true, in every
// placed member, with the cluster's name. The program stands alone: copy this directory to start
// a controller of your own. Dockerfile builds its image and config/ deploys it (README.md,
// "Deploy").
//
//	go run ./providers/placement -kubeconfig ~/.kube/hub.kubeconfig -clusterprofile-provider-file providers.json -placement-namespace fleet -decision-key web
//
// "placement schedule" is a scheduler stand-in: it writes the decision (its slices of at most
// -slice-size references) naming the given ClusterProfiles, replacing what it said before:
//
//	go run ./providers/placement schedule -kubeconfig ~/.kube/hub.kubeconfig -namespace fleet -decision-key web east west
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	mcr "mcr.dev/core"
	"mcr.dev/core/clusters"
	"mcr.dev/core/providers/kit"
	"mcr.dev/providers/clusterprofile"
)

// leaderElectionID is the default name of the leader election Lease.
const leaderElectionID = "placement.examples.mcr.dev"

func main() {
	if err := run(mcr.SetupSignalHandler(), os.Args[1:]); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "schedule" {
		return runScheduler(ctx, args[1:])
	}
	fs := flag.NewFlagSet("placement", flag.ContinueOnError)
	common := bindManagerFlags(fs, leaderElectionID)
	loadAccessProviders := clusterprofile.RegisterProviderFileFlag(fs)
	namespaces := fs.String("namespaces", "", "comma-separated hub namespaces whose ClusterProfiles may be placed (default: all)")
	placementNamespace := fs.String("placement-namespace", "", "hub namespace of the PlacementDecisions (default: those of -namespaces, or all)")
	decisionKey := fs.String("decision-key", "", "follow the slices labeled multicluster.x-k8s.io/decision-key=<value> (default: any)")
	placementKey := fs.String("placement-key", "", "follow the slices labeled multicluster.x-k8s.io/placement-key=<value> (default: any)")
	grace := fs.Duration("unready-grace-period", clusterprofile.DefaultUnreadyGracePeriod, "how long an engaged ClusterProfile may be unready before its cluster is disengaged; negative: at once")
	syncTimeout := fs.Duration("cache-sync-timeout", clusters.DefaultCacheSyncTimeout, "how long a member may take to answer (the plugin included) and sync before it is retried")
	maxRetry := fs.Duration("retry-max-delay", clusterprofile.DefaultRetryMaxDelay, "longest backoff between attempts to engage an unreachable member")
	if err := fs.Parse(args); err != nil {
		return err
	}
	common.SetupLogging()
	host, err := common.HostConfig()
	if err != nil {
		return err
	}

	// snippet:begin placement-provider
	accessProviders, err := loadAccessProviders() // nil without -clusterprofile-provider-file
	if err != nil {
		return err
	}
	if accessProviders == nil {
		return fmt.Errorf("no way to reach the members: set -%s", clusterprofile.ProviderFileFlag)
	}
	// The provider engages exactly the ready ClusterProfiles that the selected slices
	// reference, and follows the scheduler as it changes them.
	provider, err := clusterprofile.New(host, clusterprofile.Options{
		AccessProviders: accessProviders,
		Namespaces:      splitList(*namespaces),
		Placement: &clusterprofile.Placement{
			Namespace:    *placementNamespace,
			DecisionKey:  *decisionKey,
			PlacementKey: *placementKey,
		},
		UnreadyGracePeriod: *grace,
		Options:            kit.Options{CacheSyncTimeout: *syncTimeout, RetryMaxDelay: *maxRetry},
	})
	if err != nil {
		return fmt.Errorf("creating the clusterprofile provider: %w", err)
	}
	mgr, err := mcr.NewManager(host, provider, common.ManagerOptions())
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	// snippet:end placement-provider

	if err := errors.Join(addHealthChecks(mgr), setupMarker(mgr)); err != nil {
		return err
	}
	mcr.Log.Info("Starting", "placementNamespace", *placementNamespace, "decisionKey", *decisionKey, "placementKey", *placementKey)
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("running the manager: %w", err)
	}
	return nil
}

// splitList splits a comma-separated flag value, such as -namespaces, dropping empty entries.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
