// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Command clusterapi runs a multi-cluster controller over the workload clusters of a Cluster API
// management cluster, with the clusterapi provider (mcr.dev/providers/clusterapi): every Cluster
// (cluster.x-k8s.io) whose control plane is initialized is a cluster, named
// <namespace>/<name> of the Cluster object, reached with the kubeconfig Secret Cluster API keeps
// for it. Clusters provisioned, rotated and deleted while it runs are engaged, re-engaged and
// disengaged.
//
// The controller (controller.go) annotates every
// ConfigMap labeled mcr.dev/example=true, in every workload cluster, with the cluster's name.
//
//	go run ./providers/clusterapi -kubeconfig ~/.kube/management.kubeconfig
//	go run ./providers/clusterapi -namespaces team-a,team-b -selector env=prod -infrastructure-kinds DockerCluster
//
// The manager runs against the management cluster (-kubeconfig), where the provider watches
// Clusters and their kubeconfig Secrets; README.md lists the RBAC that needs.
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
	"mcr.dev/providers/clusterapi"
)

// leaderElectionID is the default name of the leader election Lease.
const leaderElectionID = "clusterapi-provider.examples.mcr.dev"

func main() {
	if err := run(mcr.SetupSignalHandler(), os.Args[1:]); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("clusterapi", flag.ContinueOnError)
	common := bindManagerFlags(fs, leaderElectionID)
	namespaces := fs.String("namespaces", "", "comma-separated namespaces of the management cluster whose Clusters are served (default: all)")
	selector := fs.String("selector", "", "label selector on Cluster objects, e.g. env=prod,tier!=test (default: every Cluster)")
	infraKinds := fs.String("infrastructure-kinds", "", "comma-separated kinds of spec.infrastructureRef to serve, e.g. DockerCluster,AWSCluster (default: all)")
	apiVersion := fs.String("api-version", string(clusterapi.V1Beta2), "version of the Cluster type to read: v1beta2, or v1beta1 for an older Cluster API")
	readiness := fs.String("ready", "initialized", "when a Cluster is engaged: initialized (its control plane accepts requests) or available (and is available; disengaged when it is not)")
	syncTimeout := fs.Duration("cache-sync-timeout", clusters.DefaultCacheSyncTimeout, "how long a workload cluster may take to answer and sync before it is retried")
	if err := fs.Parse(args); err != nil {
		return err
	}
	common.SetupLogging()
	host, err := common.HostConfig()
	if err != nil {
		return err
	}

	// snippet:begin clusterapi-provider
	opts := clusterapi.Options{
		APIVersion:          clusterapi.APIVersion(*apiVersion),
		Namespaces:          splitList(*namespaces),
		InfrastructureKinds: splitList(*infraKinds),
		Options:             kit.Options{CacheSyncTimeout: *syncTimeout},
	}
	if *selector != "" {
		if opts.Selector, err = labels.Parse(*selector); err != nil {
			return fmt.Errorf("parsing -selector: %w", err)
		}
	}
	switch *readiness {
	case "initialized":
		opts.IsReady = clusterapi.ControlPlaneInitialized
	case "available":
		opts.IsReady = clusterapi.ControlPlaneAvailable
	default:
		return fmt.Errorf("unknown -ready %q: want initialized or available", *readiness)
	}
	// With -namespaces the provider's cache holds only those namespaces, so Roles there suffice.
	provider, err := clusterapi.New(host, opts)
	if err != nil {
		return fmt.Errorf("creating the clusterapi provider: %w", err)
	}
	mgr, err := mcr.NewManager(host, provider, common.ManagerOptions())
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	// snippet:end clusterapi-provider

	if err := errors.Join(addHealthChecks(mgr), setupMarker(mgr)); err != nil {
		return err
	}
	mcr.Log.Info("Starting", "namespaces", *namespaces, "selector", *selector)
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
