// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"flag"
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	mcr "mcr.dev/core"
	mcmanager "mcr.dev/core/manager"
)

// managerFlags are the flags a kubebuilder-generated main has: the host cluster, the metrics
// and health probe endpoints, leader election and logging.
type managerFlags struct {
	// kubeconfig is the host cluster's kubeconfig file. Default: in-cluster config, then
	// $KUBECONFIG, then ~/.kube/config.
	kubeconfig string
	// metricsAddr is the metrics endpoint's address; "0" turns it off. Default ":8080".
	metricsAddr string
	// probeAddr is the health probe endpoint's address; "0" turns it off. Default ":8081".
	probeAddr string
	// leaderElect makes only one replica reconcile at a time. Default false.
	leaderElect bool
	// leaderElectionID names the leader election Lease. Default: the id passed to bindManagerFlags.
	leaderElectionID string
	// leaderElectionNamespace holds the Lease. Default: the pod's namespace.
	leaderElectionNamespace string

	zap zap.Options
}

// bindManagerFlags registers the manager flags on fs; leaderElectionID is the default Lease name.
func bindManagerFlags(fs *flag.FlagSet, leaderElectionID string) *managerFlags {
	f := &managerFlags{zap: zap.Options{Development: true}}
	fs.StringVar(&f.kubeconfig, "kubeconfig", "",
		"kubeconfig of the host cluster, the one the manager runs against (default: in-cluster config, $KUBECONFIG, ~/.kube/config)")
	fs.StringVar(&f.metricsAddr, "metrics-bind-address", ":8080", "address the metrics endpoint binds to; 0 disables it")
	fs.StringVar(&f.probeAddr, "health-probe-bind-address", ":8081", "address the health probe endpoint binds to; 0 disables it")
	fs.BoolVar(&f.leaderElect, "leader-elect", false, "enable leader election, so that only one replica reconciles at a time")
	fs.StringVar(&f.leaderElectionID, "leader-election-id", leaderElectionID, "name of the Lease used for leader election")
	fs.StringVar(&f.leaderElectionNamespace, "leader-election-namespace", "",
		"namespace of the leader election Lease (default: the namespace the pod runs in)")
	f.zap.BindFlags(fs)
	return f
}

// SetupLogging installs the logger the -zap-* flags describe.
func (f *managerFlags) SetupLogging() {
	mcr.SetLogger(zap.New(zap.UseFlagOptions(&f.zap)))
}

// HostConfig loads the host cluster's config from -kubeconfig, or the way kubectl does.
func (f *managerFlags) HostConfig() (*rest.Config, error) {
	if f.kubeconfig == "" {
		cfg, err := mcr.GetConfig()
		if err != nil {
			return nil, fmt.Errorf("loading the host cluster's config: %w", err)
		}
		return cfg, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", f.kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("loading the host cluster's config from %s: %w", f.kubeconfig, err)
	}
	return cfg, nil
}

// ManagerOptions returns the manager options the flags describe.
func (f *managerFlags) ManagerOptions() mcr.Options {
	return mcr.Options{
		Metrics:                 metricsserver.Options{BindAddress: f.metricsAddr},
		HealthProbeBindAddress:  f.probeAddr,
		LeaderElection:          f.leaderElect,
		LeaderElectionID:        f.leaderElectionID,
		LeaderElectionNamespace: f.leaderElectionNamespace,
	}
}

// addHealthChecks adds what the Deployment probes (config/manager): liveness on /healthz,
// readiness on /readyz, and the fleet debug page on the metrics endpoint.
func addHealthChecks(mgr mcr.Manager) error {
	return errors.Join(
		mgr.AddHealthzCheck("healthz", healthz.Ping),
		mgr.AddReadyzCheck("readyz", healthz.Ping),
		// Ready once the provider has listed its members and the controllers have synced every
		// engaged cluster: a new replica of a rolling update waits for its fleet.
		mgr.AddReadyzCheck("fleet", mcmanager.FleetReadyCheck(mgr, mcmanager.ReadyCheckOptions{})),
		// What on-call reads first: <metrics address>/debug/fleet (docs/operations.md).
		mcmanager.AddFleetDebugHandler(mgr, mcmanager.DefaultFleetDebugPath),
	)
}
