// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Command sharded runs the same multi-cluster controller as several replicas that share one
// fleet (mcr.dev/core/manager WithSharding, package mcr.dev/core/sharding): every replica runs
// the provider and discovers every cluster, but each cluster is engaged with the controller of
// exactly one live replica. A replica that stops hands its clusters over at once; one that
// crashes is taken over after -lease-duration.
//
// The fleet is the contexts of kubeconfig files (the file provider, mcr.dev/providers/file), as
// in examples/providers/file. The controller (controller.go) annotates every ConfigMap labeled
// mcr.dev/example=true with the cluster's name and, in mcr.dev/marked-by, the replica that owns
// the cluster. The program stands alone: copy this directory to start a controller of your own.
// Dockerfile builds its image and config/ deploys it as a Deployment of three replicas
// (README.md, "Deploy").
//
// Three replicas on one machine, sharing the clusters of ./fleet/ and holding their Leases in
// the cluster of ~/.kube/config:
//
//	go run ./sharded -replica-id r1 -fleet ./fleet/ -metrics-bind-address 0 -health-probe-bind-address :8081
//	go run ./sharded -replica-id r2 -fleet ./fleet/ -metrics-bind-address 0 -health-probe-bind-address :8082
//	go run ./sharded -replica-id r3 -fleet ./fleet/ -metrics-bind-address 0 -health-probe-bind-address :8083
//
// The replicas need get, list, create, update and delete on Leases in -namespace of the host
// cluster (-kubeconfig); README.md has the Role.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	mcr "mcr.dev/core"
	"mcr.dev/core/manager"
	"mcr.dev/core/sharding"
	"mcr.dev/providers/file"
)

func main() {
	if err := run(mcr.SetupSignalHandler(), os.Args[1:]); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("sharded", flag.ContinueOnError)
	common := bindManagerFlags(fs, "sharded.examples.mcr.dev")
	replicaID := fs.String("replica-id", "", "identity of this replica, unique among the live replicas of the group (default: the hostname, i.e. the pod name, and a random suffix)")
	group := fs.String("group", "sharded.examples.mcr.dev", "the set of replicas that share the fleet: every Lease of the group carries it")
	namespace := fs.String("namespace", "", "namespace of the host cluster that holds the group's Leases (default: $POD_NAMESPACE, the pod's namespace, else default)")
	weight := fs.Float64("weight", 1, "this replica's share of the fleet relative to the others'")
	leaseDuration := fs.Duration("lease-duration", 15*time.Second, "how long a replica may go unrenewed before the others take over its clusters (the failover time after a crash)")
	renewDeadline := fs.Duration("renew-deadline", 0, "how long a replica keeps its clusters without renewing its Lease; less than -lease-duration (default: 2/3 of it)")
	renewInterval := fs.Duration("renew-interval", 0, "how often the membership Lease is renewed and the peers are listed (default: 1/3 of -lease-duration)")
	fleet := fs.String("fleet", "", "kubeconfig files, directories (a trailing / marks one that does not exist yet) and globs, separated by '"+
		string(os.PathListSeparator)+"'; every context is a cluster (default: $KUBECONFIG, else ~/.kube/config)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	common.SetupLogging()
	host, err := common.HostConfig()
	if err != nil {
		return err
	}
	if *replicaID == "" {
		if *replicaID, err = defaultReplicaID(); err != nil {
			return err
		}
	}

	opts := file.Options{}
	if *fleet != "" {
		opts.Files, opts.Dirs, opts.Globs = file.ParsePaths(*fleet)
	}
	provider, err := file.New(opts)
	if err != nil {
		return fmt.Errorf("creating the file provider: %w", err)
	}
	// snippet:begin sharded-wiring
	// Every replica runs the provider and sees the whole fleet; WithSharding engages each
	// cluster with the controllers of one replica only, fenced by a Lease per cluster in the
	// host cluster. Leader election stays off: every replica works.
	mgr, err := mcr.NewManager(host, provider, common.ManagerOptions(), manager.WithSharding(sharding.Options{
		Group:         *group,
		Namespace:     *namespace,
		Identity:      *replicaID,
		Weight:        *weight,
		LeaseDuration: *leaseDuration,
		RenewDeadline: *renewDeadline,
		RenewInterval: *renewInterval,
	}))
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	// The controller is unchanged: it only ever sees the clusters this replica owns.
	if err := setupMarker(mgr, *replicaID); err != nil {
		return err
	}
	// snippet:end sharded-wiring

	if err := addHealthChecks(mgr); err != nil {
		return err
	}
	mcr.Log.Info("Starting", "replica", *replicaID, "group", *group, "fleet", *fleet)
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("running the manager: %w", err)
	}
	return nil
}

// defaultReplicaID returns the hostname (the pod name in Kubernetes) with a random suffix, so
// that a restarted process is a new replica, as package sharding's default identity is; the
// example needs the identity itself to record it.
func defaultReplicaID() (string, error) {
	host, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("finding the hostname for -replica-id: %w", err)
	}
	suffix := make([]byte, 4)
	if _, err := rand.Read(suffix); err != nil {
		return "", fmt.Errorf("generating -replica-id: %w", err)
	}
	return host + "_" + hex.EncodeToString(suffix), nil
}
