// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Command kind runs a multi-cluster controller over the clusters of the local kind installation,
// with the kind provider (mcr.dev/providers/kind): every cluster `kind get clusters` lists, or
// those whose names start with -prefix, is a cluster, named exactly as kind names it. Clusters
// created or deleted while it runs are engaged or disengaged at the next poll. This is the
// provider for developing a multi-cluster controller on a laptop or in CI.
//
// The controller (controller.go) annotates every
// ConfigMap labeled mcr.dev/example=true, in every cluster, with the cluster's name.
//
//	kind create cluster --name fleet-a
//	kind create cluster --name fleet-b
//	go run ./providers/kind -prefix fleet-
//
// The manager itself (leader election) talks to the host cluster of -kubeconfig, by default
// kubectl's current context; the
// provider needs no Kubernetes permissions, only the container engine (docker, podman or
// nerdctl, chosen as the kind command line chooses it).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	kindcluster "sigs.k8s.io/kind/pkg/cluster"

	mcr "mcr.dev/core"
	"mcr.dev/core/clusters"
	"mcr.dev/core/providers/kit"
	"mcr.dev/providers/kind"
)

// leaderElectionID is the default name of the leader election Lease.
const leaderElectionID = "kind-provider.examples.mcr.dev"

func main() {
	if err := run(mcr.SetupSignalHandler(), os.Args[1:]); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("kind", flag.ContinueOnError)
	common := bindManagerFlags(fs, leaderElectionID)
	prefix := fs.String("prefix", "", "engage only the kind clusters whose names start with this prefix (default: all)")
	poll := fs.Duration("poll-interval", kind.DefaultPollInterval, "how often the kind clusters are listed")
	engine := fs.String("engine", "", "container engine: docker, podman or nerdctl (default: $KIND_EXPERIMENTAL_PROVIDER, else detected)")
	internal := fs.Bool("internal", false, "use the kubeconfigs for inside the kind network, for a controller that runs in a kind cluster")
	syncTimeout := fs.Duration("cache-sync-timeout", clusters.DefaultCacheSyncTimeout, "how long a new cluster may take to answer and sync before it is retried with backoff")
	if err := fs.Parse(args); err != nil {
		return err
	}
	common.SetupLogging()
	host, err := common.HostConfig()
	if err != nil {
		return err
	}

	// snippet:begin kind-provider
	opts := kind.Options{
		Prefix:       *prefix,
		PollInterval: *poll,
		Internal:     *internal,
		Options:      kit.Options{CacheSyncTimeout: *syncTimeout},
	}
	switch *engine {
	case "":
	case "docker":
		opts.KindOptions = []kindcluster.ProviderOption{kindcluster.ProviderWithDocker()}
	case "podman":
		opts.KindOptions = []kindcluster.ProviderOption{kindcluster.ProviderWithPodman()}
	case "nerdctl":
		opts.KindOptions = []kindcluster.ProviderOption{kindcluster.ProviderWithNerdctl("nerdctl")}
	default:
		return fmt.Errorf("unknown container engine %q: want docker, podman or nerdctl", *engine)
	}
	provider := kind.New(opts)
	mgr, err := mcr.NewManager(host, provider, common.ManagerOptions())
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	// snippet:end kind-provider

	if err := errors.Join(addHealthChecks(mgr), setupMarker(mgr)); err != nil {
		return err
	}
	mcr.Log.Info("Starting", "prefix", *prefix)
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("running the manager: %w", err)
	}
	return nil
}
