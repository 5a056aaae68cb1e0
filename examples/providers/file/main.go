// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Command file runs a multi-cluster controller over the clusters of kubeconfig files, with the
// file provider (mcr.dev/providers/file): every context of every kubeconfig file in the given
// files, directories and globs is a cluster, named <file>+<context>. Files added, changed or
// removed while it runs add, re-engage or remove clusters. This is how a fleet is mounted into
// a pod: a Secret or ConfigMap volume of kubeconfigs.
//
// The controller (controller.go) annotates every
// ConfigMap labeled mcr.dev/example=true, in every cluster, with the cluster's name.
//
//	go run ./providers/file -fleet /etc/mcr/fleet/ -kubeconfig ~/.kube/config
//	go run ./providers/file -fleet "$HOME/.kube/config" -trusted -metrics-bind-address 0
//
// See README.md for how to try it with kind clusters.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	mcr "mcr.dev/core"
	"mcr.dev/core/providers/kit"
	"mcr.dev/providers/file"
)

// leaderElectionID is the default name of the leader election Lease.
const leaderElectionID = "file-provider.examples.mcr.dev"

func main() {
	if err := run(mcr.SetupSignalHandler(), os.Args[1:]); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("file", flag.ContinueOnError)
	common := bindManagerFlags(fs, leaderElectionID)
	fleet := fs.String("fleet", "", "kubeconfig files, directories (a trailing / marks one that does not exist yet) and globs, separated by '"+
		string(os.PathListSeparator)+"'; every context is a cluster (default: $KUBECONFIG, else ~/.kube/config)")
	trusted := fs.Bool("trusted", false, "accept exec and auth-provider plugins, references to local files and insecure-skip-tls-verify "+
		"in the kubeconfigs, as kubectl does (only for files no one but the operator writes)")
	resync := fs.Duration("resync-period", time.Minute, "how often every file is read again without a file system event")
	if err := fs.Parse(args); err != nil {
		return err
	}
	common.SetupLogging()
	host, err := common.HostConfig()
	if err != nil {
		return err
	}

	// snippet:begin file-provider
	opts := file.Options{Options: kit.Options{ResyncPeriod: *resync}}
	if *fleet != "" {
		opts.Files, opts.Dirs, opts.Globs = file.ParsePaths(*fleet)
	}
	if *trusted {
		// The default of both, the zero Policy, accepts inline credentials only.
		opts.Policy, opts.DiscoveredPolicy = file.TrustedPolicy(), file.TrustedPolicy()
	}
	provider, err := file.New(opts)
	if err != nil {
		return fmt.Errorf("creating the file provider: %w", err)
	}
	// The manager runs the provider: nothing else to start.
	mgr, err := mcr.NewManager(host, provider, common.ManagerOptions())
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	// snippet:end file-provider

	if err := errors.Join(addHealthChecks(mgr), setupMarker(mgr)); err != nil {
		return err
	}
	mcr.Log.Info("Starting", "fleet", *fleet)
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("running the manager: %w", err)
	}
	return nil
}
