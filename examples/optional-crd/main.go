// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Command optional-crd runs a controller for a CRD that only some members of the fleet have:
// Backup (examples.mcr.dev/v1alpha1), which an add-on brings to some clusters. In every member
// the controller reconciles the ConfigMaps labeled examples.mcr.dev/backup=true (backup
// targets): it annotates each with the number of Backups that name it, found through a field
// index on spec.target, and sets those Backups' status (phase Scheduled, and the cluster).
//
// In a member that does not serve Backups, the Backup watch and the field index are parked
// (logged once, shown on /debug/fleet, counted as synced for readiness) while the ConfigMaps
// are reconciled as anywhere else; once the member gets the CRD, both start by themselves.
// See docs/operations.md, "Kinds a member does not serve".
//
// Without -fleet the command is a demo: it starts an embedded fleet of two clusters (real
// kube-apiservers, mcr.dev/core/envtest), installs the CRD and a Backup in the first, shows the
// second's parked watch, installs the CRD and a Backup there too, and exits once both are
// reconciled. With -fleet the members are the contexts of kubeconfig files (the file provider,
// mcr.dev/providers/file) and the command runs until it is stopped.
//
//	go run ./optional-crd
//	go run ./optional-crd -fleet /tmp/fleet/ -install-later b.kubeconfig+kind-b
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	mcr "mcr.dev/core"
	"mcr.dev/core/clusters"
	"mcr.dev/core/envtest"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/providers/file"
)

// leaderElectionID is the default name of the leader election Lease.
const leaderElectionID = "optional-crd.examples.mcr.dev"

func main() {
	if err := run(mcr.SetupSignalHandler(), os.Args[1:]); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("optional-crd", flag.ContinueOnError)
	common := bindManagerFlags(fs, leaderElectionID)
	fleet := fs.String("fleet", "", "kubeconfig files, directories and globs of the members, separated by '"+
		string(os.PathListSeparator)+"'; every context is a member (default: an embedded fleet of two clusters, a demo)")
	installNow := fs.String("install-crd", "", "comma-separated clusters to install the Backup CRD in at start "+
		"(default with the embedded fleet: its first)")
	installLater := fs.String("install-later", "", "comma-separated clusters to install the Backup CRD in once their Backup "+
		"watch is parked, after -install-after (default with the embedded fleet: its second)")
	installAfter := fs.Duration("install-after", 20*time.Second, "how long the -install-later clusters stay parked")
	retryMax := fs.Duration("parked-retry-max", clusters.DefaultParkedRetryMax,
		"bound of the backoff of the retries of a watch or field index parked on a cluster without the CRD")
	if err := fs.Parse(args); err != nil {
		return err
	}
	common.SetupLogging()

	var opts file.Options
	var demo *envtest.Fleet // the embedded fleet; nil with -fleet
	if *fleet != "" {
		opts.Files, opts.Dirs, opts.Globs = file.ParsePaths(*fleet)
	} else {
		dir, f, err := embeddedFleet(ctx)
		if err != nil {
			return err
		}
		defer func() { _ = f.Stop(); _ = os.RemoveAll(dir) }()
		demo, opts.Dirs = f, []string{dir}
		*installNow = cmp.Or(*installNow, clusterName(f.Members()[0]))
		*installLater = cmp.Or(*installLater, clusterName(f.Members()[1]))
	}
	provider, err := file.New(opts)
	if err != nil {
		return fmt.Errorf("creating the file provider: %w", err)
	}
	// The provider's member set (clusters.Clusters) retries the field indexes it parks.
	provider.Options.ParkedRetryMax = *retryMax
	// The configs of the members to install the CRD in; the provider reads the files again itself.
	configs, err := provider.ReadConfigs()
	if err != nil {
		fmt.Fprintln(os.Stderr, "warning: some kubeconfigs are unusable and are left out:", err)
	}
	now, later := splitList(*installNow), splitList(*installLater)
	for _, name := range slices.Concat(now, later) {
		if configs[mcr.ClusterName(name)] == nil {
			return fmt.Errorf("no cluster %q in the fleet", name)
		}
	}

	var host *rest.Config
	if demo != nil && common.kubeconfig == "" {
		host = demo.Members()[0].Config()
	} else if host, err = common.HostConfig(); err != nil {
		return err
	}
	scheme, err := newScheme()
	if err != nil {
		return err
	}
	// snippet:begin optional-crd-manager
	// Every member's client knows Backup, whether or not the member serves it.
	mgr, err := mcr.NewManager(host, provider, common.ManagerOptions(),
		mcmanager.WithClusterDefaults(clusters.Defaults{Scheme: scheme}))
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	// Readiness counts a parked watch as synced; /debug/fleet lists what is parked where.
	if err := addHealthChecks(mgr); err != nil {
		return err
	}
	// snippet:end optional-crd-manager
	if err := setup(ctx, mgr, *retryMax); err != nil {
		return err
	}

	if demo != nil {
		for _, cfg := range configs {
			if err := create(ctx, cfg, target()...); err != nil {
				return err
			}
		}
	}
	for _, name := range now {
		if err := install(ctx, name, configs[mcr.ClusterName(name)], demo != nil); err != nil {
			return err
		}
	}

	mgrCtx, stop := context.WithCancel(ctx)
	defer stop()
	var mgrErr error
	stopped := make(chan struct{})
	go func() { mgrErr = mgr.Start(mgrCtx); close(stopped) }()

	s := script{mgr: mgr, stopped: stopped, configs: configs, seed: demo != nil}
	err = s.installLater(ctx, later, *installAfter, common.metricsAddr)
	if err == nil && demo != nil {
		err = s.report(ctx, slices.Concat(now, later))
	}
	if err != nil || demo != nil {
		stop()
	}
	<-stopped
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		err = nil // interrupted: not a failure
	}
	if mgrErr != nil && !errors.Is(mgrErr, context.Canceled) {
		err = errors.Join(err, fmt.Errorf("running the manager: %w", mgrErr))
	}
	return err
}

// newScheme returns a scheme of the built-in kinds and Backup.
func newScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(s), AddToScheme(s)); err != nil {
		return nil, err
	}
	return s, nil
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
