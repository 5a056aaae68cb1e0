// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Command kubeconfig runs a multi-cluster controller over the clusters enrolled as kubeconfig
// Secrets on a host cluster, with the kubeconfig provider (mcr.dev/providers/kubeconfig): every
// Secret labeled mcr.dev/kubeconfig=true in the watched namespace of the host is a cluster,
// named after the Secret. Secrets created, rotated, relabeled or deleted while it runs add,
// re-engage or remove clusters. This is the provider for a controller that runs in a hub cluster
// and reaches members with credentials someone enrolled.
//
// The controller (controller.go) annotates every ConfigMap labeled mcr.dev/example=true, in every
// cluster, with the cluster's name. The program stands alone: copy this directory to start a
// controller of your own. Dockerfile builds its image and config/ deploys it (README.md, "Deploy").
//
// Enroll a member (creates a ServiceAccount on it, stores its kubeconfig in a Secret on the
// host), then run the controller against the host:
//
//	go run mcr.dev/providers/kubeconfig/cmd/kubeconfig-secret -name east -member-context kind-east -host-context kind-hub -cluster-role edit
//	go run ./providers/kubeconfig -kubeconfig ~/.kube/hub.kubeconfig -namespace mcr-system
//
// See README.md for a complete walk-through with kind clusters.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	mcr "mcr.dev/core"
	"mcr.dev/core/clusters"
	"mcr.dev/core/providers/kit"
	"mcr.dev/providers/kubeconfig"
)

// leaderElectionID is the default name of the leader election Lease.
const leaderElectionID = "kubeconfig-provider.examples.mcr.dev"

func main() {
	if err := run(mcr.SetupSignalHandler(), os.Args[1:]); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("kubeconfig", flag.ContinueOnError)
	common := bindManagerFlags(fs, leaderElectionID)
	namespace := fs.String("namespace", kubeconfig.DefaultNamespace, "host namespace whose kubeconfig Secrets are clusters")
	allNamespaces := fs.Bool("all-namespaces", false, "watch kubeconfig Secrets in every namespace of the host; clusters are then named <namespace>/<name>")
	secretLabel := fs.String("secret-label", kubeconfig.DefaultSecretLabel, "label (with value \"true\") that marks a kubeconfig Secret; "+
		kubeconfig.UpstreamSecretLabel+" serves the Secrets of multicluster-runtime's kubeconfig provider")
	secretKey := fs.String("secret-key", kubeconfig.DefaultSecretKey, "data key of the Secret that holds the kubeconfig")
	syncTimeout := fs.Duration("cache-sync-timeout", clusters.DefaultCacheSyncTimeout, "how long a member may take to answer and sync before it is retried")
	maxRetry := fs.Duration("retry-max-delay", kubeconfig.DefaultRetryMaxDelay, "longest backoff between attempts to engage an unreachable member")
	if err := fs.Parse(args); err != nil {
		return err
	}
	common.SetupLogging()
	host, err := common.HostConfig()
	if err != nil {
		return err
	}

	// snippet:begin kubeconfig-provider
	opts := kubeconfig.Options{
		Namespaces:    []string{*namespace},
		AllNamespaces: *allNamespaces,
		SecretLabel:   *secretLabel,
		SecretKey:     *secretKey,
		Options: kit.Options{
			CacheSyncTimeout: *syncTimeout,
			RetryMaxDelay:    *maxRetry,
			// Policy stays the zero value: anyone who can write a Secret in the namespace
			// controls the kubeconfig, so exec plugins, local files and insecure TLS are refused.
		},
	}
	if *allNamespaces {
		opts.ClusterName = kubeconfig.NamespacedSecretName // Secrets of different namespaces never collide
	}
	// The provider watches the Secrets on the host with a cache of its own, restricted to the
	// labeled Secrets of the namespace: it needs RBAC for nothing else.
	provider, err := kubeconfig.New(host, opts)
	if err != nil {
		return fmt.Errorf("creating the kubeconfig provider: %w", err)
	}
	mgr, err := mcr.NewManager(host, provider, common.ManagerOptions())
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	// snippet:end kubeconfig-provider

	if err := errors.Join(addHealthChecks(mgr), setupMarker(mgr)); err != nil {
		return err
	}
	mcr.Log.Info("Starting", "namespace", *namespace, "allNamespaces", *allNamespaces)
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("running the manager: %w", err)
	}
	return nil
}
