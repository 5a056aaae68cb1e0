// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Command clusterprofile runs a multi-cluster controller over the clusters of a Cluster
// Inventory (KEP-4322), with the clusterprofile provider (mcr.dev/providers/clusterprofile):
// every ready ClusterProfile (multicluster.x-k8s.io/v1alpha1) on the hub is a cluster named
// <namespace>/<name>, reached through the operator's access providers (KEP-5339: exec credential
// plugins listed in the -clusterprofile-provider-file) or, deprecated, a kubeconfig Secret the
// cluster manager writes for this consumer. Profiles registered, changed and removed while it
// runs are engaged, re-engaged and disengaged; one that turns unready keeps its cluster for a
// grace period.
//
// The controller (controller.go) annotates every ConfigMap labeled mcr.dev/example=true, in every
// member, with the cluster's name. The program stands alone: copy this directory to start a
// controller of your own. Dockerfile builds its image and config/ deploys it (README.md, "Deploy").
//
//	go run ./providers/clusterprofile -kubeconfig ~/.kube/hub.kubeconfig -clusterprofile-provider-file providers.json
//	go run ./providers/clusterprofile -clusterprofile-provider-file providers.json -namespaces fleet -selector x-k8s.io/cluster-manager=ocm
//
// The RBAC the provider needs on the hub is in providers/clusterprofile/config/rbac.yaml.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/labels"

	mcr "mcr.dev/core"
	"mcr.dev/core/clusters"
	"mcr.dev/core/providers/kit"
	"mcr.dev/providers/clusterprofile"
)

// leaderElectionID is the default name of the leader election Lease.
const leaderElectionID = "clusterprofile-provider.examples.mcr.dev"

func main() {
	if err := run(mcr.SetupSignalHandler(), os.Args[1:]); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("clusterprofile", flag.ContinueOnError)
	common := bindManagerFlags(fs, leaderElectionID)
	loadAccessProviders := clusterprofile.RegisterProviderFileFlag(fs)
	namespaces := fs.String("namespaces", "", "comma-separated hub namespaces whose ClusterProfiles are served (default: all)")
	selector := fs.String("selector", "", "label selector on ClusterProfiles, e.g. x-k8s.io/cluster-manager=ocm (default: every ClusterProfile)")
	readyConditions := fs.String("ready-conditions", "ControlPlaneHealthy", "comma-separated conditions that must all be True for a ClusterProfile to be engaged")
	grace := fs.Duration("unready-grace-period", clusterprofile.DefaultUnreadyGracePeriod, "how long an engaged ClusterProfile may be unready before its cluster is disengaged; negative: at once")
	consumer := fs.String("secret-consumer", "", "deprecated Secret strategy: the x-k8s.io/cluster-inventory-consumer label value of the kubeconfig Secrets written for this controller (default: off)")
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

	// snippet:begin clusterprofile-provider
	accessProviders, err := loadAccessProviders() // nil without -clusterprofile-provider-file
	if err != nil {
		return err
	}
	opts := clusterprofile.Options{
		AccessProviders:    accessProviders,
		Namespaces:         splitList(*namespaces),
		IsReady:            clusterprofile.ConditionsTrue(splitList(*readyConditions)...),
		UnreadyGracePeriod: *grace,
		Options:            kit.Options{CacheSyncTimeout: *syncTimeout, RetryMaxDelay: *maxRetry},
	}
	if *consumer != "" {
		opts.Secret = &clusterprofile.SecretStrategy{ConsumerName: *consumer}
	}
	if opts.AccessProviders == nil && opts.Secret == nil {
		return fmt.Errorf("no way to reach the members: set -%s (access providers) or -secret-consumer", clusterprofile.ProviderFileFlag)
	}
	if *selector != "" {
		if opts.Selector, err = labels.Parse(*selector); err != nil {
			return fmt.Errorf("parsing -selector: %w", err)
		}
	}
	// The provider watches ClusterProfiles on the hub with a cache of its own, restricted to
	// -namespaces; the provider kit runs the access provider's plugin (bounded, never
	// interactively) when a member needs credentials, and again on expiry or a 401, without
	// re-engaging.
	provider, err := clusterprofile.New(host, opts)
	if err != nil {
		return fmt.Errorf("creating the clusterprofile provider: %w", err)
	}
	mgr, err := mcr.NewManager(host, provider, common.ManagerOptions())
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	// snippet:end clusterprofile-provider

	if err := errors.Join(addHealthChecks(mgr), setupMarker(mgr)); err != nil {
		return err
	}
	mcr.Log.Info("Starting", "namespaces", *namespaces, "selector", *selector)
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
