// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Command milo runs a multi-cluster controller over the project control planes of a Milo
// installation, with the milo provider (mcr.dev/providers/milo): every ready project is a
// cluster named after the project. Two modes:
//
//   - project (default): the manager runs against the Milo apiserver; it watches Projects
//     (resourcemanager.miloapis.com) and reaches each project's control plane through the Milo
//     apiserver's path /apis/resourcemanager.miloapis.com/v1alpha1/projects/<project>/control-plane.
//   - projectcontrolplane: the manager runs inside Milo's infrastructure cluster; it watches
//     ProjectControlPlanes (infrastructure.miloapis.com) and reaches each control plane at its
//     in-cluster Service (or at -control-plane-host).
//
// The same identity, the one of -kubeconfig, is presented to every project's control plane.
//
// The controller (controller.go) annotates every
// ConfigMap labeled mcr.dev/example=true, in every project, with the project's name.
//
//	go run ./providers/milo -kubeconfig ~/.kube/milo.kubeconfig -selector tier=prod
//	go run ./providers/milo -mode projectcontrolplane -unready-grace-period 1m
//
// The RBAC the provider needs on its host is in providers/milo/config/rbac.yaml.
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
	"mcr.dev/providers/milo"
)

// leaderElectionID is the default name of the leader election Lease.
const leaderElectionID = "milo-provider.examples.mcr.dev"

func main() {
	if err := run(mcr.SetupSignalHandler(), os.Args[1:]); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// modes maps the values of -mode to the provider's modes.
var modes = map[string]milo.Mode{"project": milo.ModeProject, "projectcontrolplane": milo.ModeProjectControlPlane}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("milo", flag.ContinueOnError)
	common := bindManagerFlags(fs, leaderElectionID)
	mode := fs.String("mode", "project", "project: watch Projects on the Milo apiserver (-kubeconfig) and reach control planes through it; "+
		"projectcontrolplane: watch ProjectControlPlanes on the infrastructure cluster and reach control planes at their Services")
	selector := fs.String("selector", "", "label selector on the Projects or ProjectControlPlanes, e.g. tier=prod (default: every project)")
	grace := fs.Duration("unready-grace-period", milo.DefaultUnreadyGracePeriod, "how long an engaged project may be unready before it is disengaged; negative: at once")
	controlPlaneHost := fs.String("control-plane-host", "", "advanced: URL of a project's control plane, with {project} for the project's name, "+
		"e.g. https://gateway.example.com/projects/{project} (default: the Milo apiserver's project path in project mode, "+
		"the project's Service in projectcontrolplane mode)")
	syncTimeout := fs.Duration("cache-sync-timeout", clusters.DefaultCacheSyncTimeout, "how long a project's control plane may take to answer and sync before it is retried")
	maxRetry := fs.Duration("retry-max-delay", milo.DefaultRetryMaxDelay, "longest backoff between attempts to engage an unreachable control plane")
	if err := fs.Parse(args); err != nil {
		return err
	}
	common.SetupLogging()
	host, err := common.HostConfig()
	if err != nil {
		return err
	}

	// snippet:begin milo-provider
	m, ok := modes[*mode]
	if !ok {
		return fmt.Errorf("unknown -mode %q: want project or projectcontrolplane", *mode)
	}
	opts := milo.Options{
		Mode:               m,
		UnreadyGracePeriod: *grace,
		// BaseConfig stays nil: the host's config, whose credentials every control plane sees.
		Options: kit.Options{CacheSyncTimeout: *syncTimeout, RetryMaxDelay: *maxRetry},
	}
	if *selector != "" {
		if opts.Selector, err = labels.Parse(*selector); err != nil {
			return fmt.Errorf("parsing -selector: %w", err)
		}
	}
	if *controlPlaneHost != "" {
		template := *controlPlaneHost
		opts.ControlPlaneHost = func(project string) string { return strings.ReplaceAll(template, "{project}", project) }
	}
	provider, err := milo.New(host, opts)
	if err != nil {
		return fmt.Errorf("creating the milo provider: %w", err)
	}
	mgr, err := mcr.NewManager(host, provider, common.ManagerOptions())
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	// snippet:end milo-provider

	if err := errors.Join(addHealthChecks(mgr), setupMarker(mgr)); err != nil {
		return err
	}
	mcr.Log.Info("Starting", "mode", *mode, "selector", *selector)
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("running the manager: %w", err)
	}
	return nil
}
