// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Command kcp runs a multi-cluster controller over the workspaces (logical clusters) of kcp that
// bind an APIExport, with the kcp provider (mcr.dev/providers/kcp): the manager runs against the
// workspace of the APIExport (-kubeconfig, e.g. https://kcp.example.com/clusters/root:widgets-provider),
// the provider follows the APIExportEndpointSlice named -endpoint-slice there and watches the
// APIExport's virtual workspace on every shard it lists; every logical cluster with a ready
// APIBinding (or, with -watch logicalclusters, a Ready LogicalCluster) is a cluster named after
// the logical cluster (its kcp.io/cluster name).
//
// The controller (controller.go) annotates every
// ConfigMap labeled mcr.dev/example=true, in every bound workspace, with the logical cluster's
// name. The APIExport must claim ConfigMaps (a permission claim) for the virtual workspace to
// serve them.
//
//	go run ./providers/kcp -kubeconfig ~/.kube/kcp-widgets.kubeconfig -endpoint-slice widgets
//
// The RBAC the provider needs in the APIExport's workspace is in providers/kcp/config/rbac.yaml.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"

	mcr "mcr.dev/core"
	"mcr.dev/core/clusters"
	"mcr.dev/core/providers/kit"
	"mcr.dev/providers/kcp"
)

// leaderElectionID is the default name of the leader election Lease.
const leaderElectionID = "kcp-provider.examples.mcr.dev"

func main() {
	if err := run(mcr.SetupSignalHandler(), os.Args[1:]); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("kcp", flag.ContinueOnError)
	common := bindManagerFlags(fs, leaderElectionID)
	sliceName := fs.String("endpoint-slice", "", "name of the APIExportEndpointSlice in the workspace -kubeconfig points at, usually the APIExport's name (required)")
	watch := fs.String("watch", "apibindings", "objects whose logical clusters make the fleet: apibindings (ready APIBindings of the export) "+
		"or logicalclusters (Ready LogicalClusters, for exports that claim them)")
	syncTimeout := fs.Duration("cache-sync-timeout", clusters.DefaultCacheSyncTimeout, "how long a shard's virtual workspace may take to sync before it is retried")
	maxRetry := fs.Duration("retry-max-delay", kcp.DefaultRetryMaxDelay, "longest backoff between attempts to watch a shard or engage a logical cluster")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *sliceName == "" {
		return errors.New("-endpoint-slice is required: the APIExportEndpointSlice of the APIExport whose workspaces are the fleet")
	}
	common.SetupLogging()
	host, err := common.HostConfig()
	if err != nil {
		return err
	}

	// snippet:begin kcp-provider
	scheme := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), apisv1alpha1.AddToScheme(scheme), corev1alpha1.AddToScheme(scheme)); err != nil {
		return fmt.Errorf("building the scheme: %w", err)
	}
	opts := kcp.Options{Scheme: scheme, Options: kit.Options{CacheSyncTimeout: *syncTimeout, RetryMaxDelay: *maxRetry}}
	switch *watch {
	case "apibindings":
		// The default: ObjectToWatch APIBinding, ready when its Ready condition is True.
	case "logicalclusters":
		opts.ObjectToWatch = &corev1alpha1.LogicalCluster{}
		opts.IsReady = func(_ context.Context, obj client.Object) bool {
			lc, ok := obj.(*corev1alpha1.LogicalCluster)
			return ok && lc.Status.Phase == corev1alpha1.LogicalClusterPhaseReady
		}
	default:
		return fmt.Errorf("unknown -watch %q: want apibindings or logicalclusters", *watch)
	}
	// -kubeconfig points at the APIExport's workspace: the provider reads the endpoint slice
	// there and reaches every shard's virtual workspace with the same credentials.
	provider, err := kcp.New(host, *sliceName, opts)
	if err != nil {
		return fmt.Errorf("creating the kcp provider: %w", err)
	}
	mgr, err := mcr.NewManager(host, provider, common.ManagerOptions())
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	// snippet:end kcp-provider

	if err := errors.Join(addHealthChecks(mgr), setupMarker(mgr)); err != nil {
		return err
	}
	mcr.Log.Info("Starting", "endpointSlice", *sliceName, "watch", *watch)
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("running the manager: %w", err)
	}
	return nil
}
