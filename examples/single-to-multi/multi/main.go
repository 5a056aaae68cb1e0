// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Command multi is ../single ported to mcr, the "after" of the single-to-multi example: it
// gives every namespace labeled team=<name> a ConfigMap "team" that names the team, owned by the
// namespace, in every cluster of the fleet. The port changed the imports and a few lines;
// README.md shows the diff.
//
// The same binary runs in both modes. Without -fleet there is no provider and it reconciles the
// cluster of -kubeconfig, exactly as ../single does; with -fleet every context of the given
// kubeconfig files is a cluster (the file provider, mcr.dev/providers/file).
//
//	go run ./single-to-multi/multi -kubeconfig ~/.kube/config
//	go run ./single-to-multi/multi -kubeconfig ~/.kube/config -fleet ~/.kube/fleet/
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	ctrl "mcr.dev/core" // mcr's root package has controller-runtime's names
	"mcr.dev/providers/file"
)

func main() {
	if err := run(ctrl.SetupSignalHandler(), os.Args[1:]); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("team-controller", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the cluster (default: in-cluster config, $KUBECONFIG, ~/.kube/config)")
	fleet := fs.String("fleet", "", "kubeconfig files, directories and globs of the fleet; every context is a cluster (default: none, single-cluster mode)")
	metricsAddr := fs.String("metrics-bind-address", ":8080", "address the metrics endpoint binds to; 0 disables it")
	zapOpts := zap.Options{Development: true}
	zapOpts.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	cfg, err := ctrl.GetConfig()
	if *kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", *kubeconfig)
	}
	if err != nil {
		return fmt.Errorf("loading the kubeconfig: %w", err)
	}

	// snippet:begin team-wiring
	var provider ctrl.Provider // nil: single-cluster mode
	if *fleet != "" {
		files, dirs, globs := file.ParsePaths(*fleet)
		if provider, err = file.New(file.Options{Files: files, Dirs: dirs, Globs: globs}); err != nil {
			return fmt.Errorf("creating the provider: %w", err)
		}
	}
	mgr, err := ctrl.NewManager(cfg, provider, ctrl.Options{
		Metrics: metricsserver.Options{BindAddress: *metricsAddr},
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	err = ctrl.NewControllerManagedBy(mgr).
		Named("team").
		For(&corev1.Namespace{}).
		Owns(&corev1.ConfigMap{}).
		Complete(&TeamReconciler{Manager: mgr})
	if err != nil {
		return fmt.Errorf("creating the controller: %w", err)
	}
	// snippet:end team-wiring
	return mgr.Start(ctx)
}

// TeamLabel names the team a namespace belongs to.
const TeamLabel = "team"

// TeamReconciler gives every team namespace a ConfigMap "team" that names its team.
type TeamReconciler struct {
	Manager ctrl.Manager
}

// snippet:begin team-reconcile

// Reconcile writes the ConfigMap of one namespace.
func (r *TeamReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cluster, err := r.Manager.GetCluster(ctx, req.ClusterName)
	if err != nil {
		return ctrl.Result{}, err
	}
	cl := cluster.GetClient()

	ns := &corev1.Namespace{}
	if err := cl.Get(ctx, req.NamespacedName, ns); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	team := ns.Labels[TeamLabel]
	if team == "" || !ns.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "team"}}
	op, err := ctrl.CreateOrUpdate(ctx, cl, cm, func() error {
		cm.Data = map[string]string{"team": team}
		return ctrl.SetControllerReference(ns, cm, cl.Scheme())
	})
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("writing ConfigMap %s/team: %w", ns.Name, err)
	}
	ctrl.LoggerFrom(ctx).Info("Team ConfigMap", "team", team, "operation", op)
	return ctrl.Result{}, nil
}

// snippet:end team-reconcile
