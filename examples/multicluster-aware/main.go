// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Command multicluster-aware is a multi-cluster-aware controller: it reads a source object in
// the host cluster and keeps derived objects in every member cluster, the pattern of
// controllers that manage a fleet from a hub (Platform Mesh's kcp examples, Karmada-style
// propagation):
//
//   - spec down: for every FleetConfigMap (examples.mcr.dev/v1alpha1) in the host, a ConfigMap
//     with the same namespace, name and data is kept in every member; a copy edited or deleted
//     in a member is put back, and a member that joins the fleet gets its copies at once;
//   - status up: the FleetConfigMap's status has a condition per member, the counts and a
//     summary condition (FleetSynced), kept by mcr.dev/core/fleetstatus;
//   - deletes: a finalizer keeps the FleetConfigMap until its copies are deleted from every
//     member.
//
// The host is the cluster of -kubeconfig (the manager's own, "local" cluster); the members are
// the contexts of the kubeconfig files given with -fleet (the file provider,
// mcr.dev/providers/file). The command installs its CRD in the host unless -install-crd=false.
//
//	go run ./multicluster-aware -kubeconfig hub.kubeconfig -fleet ./members/
//	kubectl --kubeconfig hub.kubeconfig apply -f multicluster-aware/sample.yaml
//	kubectl --kubeconfig hub.kubeconfig get fleetconfigmaps -A
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	mcr "mcr.dev/core"
	"mcr.dev/providers/file"
)

// leaderElectionID is the default name of the leader election Lease.
const leaderElectionID = "multicluster-aware.examples.mcr.dev"

func main() {
	if err := run(mcr.SetupSignalHandler(), os.Args[1:]); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("multicluster-aware", flag.ContinueOnError)
	common := bindManagerFlags(fs, leaderElectionID)
	fleet := fs.String("fleet", "", "kubeconfig files, directories and globs of the member clusters, separated by '"+
		string(os.PathListSeparator)+"'; every context is a member (default: $KUBECONFIG, else ~/.kube/config)")
	install := fs.Bool("install-crd", true, "install the FleetConfigMap CRD in the host cluster if it is missing")
	giveUpAfter := fs.Duration("give-up-after", 0, "how long a member that holds copies and left the fleet holds up "+
		"the deletion of their FleetConfigMap; 0 waits until it is back")
	if err := fs.Parse(args); err != nil {
		return err
	}
	common.SetupLogging()
	host, err := common.HostConfig()
	if err != nil {
		return err
	}
	if *install {
		installCtx, cancel := context.WithTimeout(ctx, time.Minute)
		err := installCRD(installCtx, host)
		cancel()
		if err != nil {
			return err
		}
	}

	var members file.Options
	if *fleet != "" {
		members.Files, members.Dirs, members.Globs = file.ParsePaths(*fleet)
	}
	provider, err := file.New(members)
	if err != nil {
		return fmt.Errorf("creating the file provider: %w", err)
	}
	// The host's scheme knows FleetConfigMap; members only hold ConfigMaps and Namespaces.
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := AddToScheme(scheme); err != nil {
		return err
	}
	opts := common.ManagerOptions()
	opts.Scheme = scheme
	mgr, err := mcr.NewManager(host, provider, opts)
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	if err := addHealthChecks(mgr); err != nil {
		return err
	}
	if err := setup(mgr, *giveUpAfter); err != nil {
		return fmt.Errorf("setting up the controller: %w", err)
	}
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("running the manager: %w", err)
	}
	return nil
}
