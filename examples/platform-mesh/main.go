// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Command platform-mesh is the controller of a service provider in the Platform Mesh style: the
// provider publishes an API, Database (platform-mesh.examples.mcr.dev/v1alpha1), through a kcp
// APIExport; consumers bind the export in their own workspaces and order Databases there; this
// controller runs each Database in a downstream cluster, an ordinary Kubernetes cluster, and
// writes the outcome back to the consumer's Database.
//
//   - The fleet is the consumers: the kcp provider (mcr.dev/providers/kcp) follows the
//     APIExportEndpointSlice -endpoint-slice in the provider's workspace (-kubeconfig) and
//     engages every logical cluster that binds the export, through the APIExport's virtual
//     workspace.
//   - Spec down: each Database becomes a projection downstream (-downstream-kubeconfig), a
//     ConfigMap named after the Database in the namespace consumer-<logical cluster>, labeled
//     with the consumer's logical cluster and annotated with the Database's name. A projection
//     changed or deleted downstream is put back.
//   - Status up: phase Ready, the projection's <namespace>/<name> and the observed generation,
//     written to the Database's status through the virtual workspace.
//   - Deletes: a finalizer keeps a Database until its projection is deleted downstream.
//
// config/crd.yaml is the API and config/apiexport.yaml its APIExport; README.md shows how to
// set them up in kcp with the kubectl ws and kcp plugins.
//
//	go run ./platform-mesh -kubeconfig provider.kubeconfig -downstream-kubeconfig downstream.kubeconfig
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"

	mcr "mcr.dev/core"
	"mcr.dev/providers/kcp"
)

// leaderElectionID is the default name of the leader election Lease.
const leaderElectionID = "platform-mesh.examples.mcr.dev"

func main() {
	if err := run(mcr.SetupSignalHandler(), os.Args[1:]); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("platform-mesh", flag.ContinueOnError)
	common := bindManagerFlags(fs, leaderElectionID)
	sliceName := fs.String("endpoint-slice", "databases", "name of the APIExportEndpointSlice in the provider's workspace (-kubeconfig), "+
		"kcp creates it with the APIExport's name")
	downstreamKubeconfig := fs.String("downstream-kubeconfig", "", "kubeconfig of the downstream cluster, where the consumers' Databases run (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *downstreamKubeconfig == "" {
		return errors.New("-downstream-kubeconfig is required: the cluster where the consumers' Databases run")
	}
	common.SetupLogging()
	// -kubeconfig points at the provider's workspace, e.g. https://kcp.example.com/clusters/root:databases-provider.
	host, err := common.HostConfig()
	if err != nil {
		return err
	}
	downstreamConfig, err := clientcmd.BuildConfigFromFlags("", *downstreamKubeconfig)
	if err != nil {
		return fmt.Errorf("loading the downstream cluster's config from %s: %w", *downstreamKubeconfig, err)
	}

	// snippet:begin platform-mesh-provider
	// The scheme of every consumer's client: Databases, and the APIBindings the provider watches.
	scheme := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), apisv1alpha1.AddToScheme(scheme), AddToScheme(scheme)); err != nil {
		return fmt.Errorf("building the scheme: %w", err)
	}
	provider, err := kcp.New(host, *sliceName, kcp.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("creating the kcp provider: %w", err)
	}
	opts := common.ManagerOptions()
	opts.Scheme = scheme
	mgr, err := mcr.NewManager(host, provider, opts)
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	// snippet:end platform-mesh-provider

	downstreamScheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(downstreamScheme); err != nil {
		return fmt.Errorf("building the downstream scheme: %w", err)
	}
	downstream, err := newDownstream(downstreamConfig, downstreamScheme)
	if err != nil {
		return fmt.Errorf("connecting to the downstream cluster: %w", err)
	}
	if err := addHealthChecks(mgr); err != nil {
		return err
	}
	if err := setup(mgr, downstream); err != nil {
		return fmt.Errorf("setting up the controller: %w", err)
	}
	mcr.Log.Info("Starting", "endpointSlice", *sliceName, "downstream", downstreamConfig.Host)
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("running the manager: %w", err)
	}
	return nil
}
