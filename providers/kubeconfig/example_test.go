// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kubeconfig_test

import (
	"log"

	ctrl "sigs.k8s.io/controller-runtime"

	corekubeconfig "mcr.dev/core/kubeconfig"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/providers/kit"
	"mcr.dev/providers/kubeconfig"
)

// Serve every Secret labeled mcr.dev/kubeconfig=true in the namespace mcr-system of the
// cluster the controller runs in as a member cluster. The manager starts the provider.
func Example() {
	ctx := ctrl.SetupSignalHandler()
	cfg, err := ctrl.GetConfig()
	if err != nil {
		log.Fatal(err)
	}
	provider, err := kubeconfig.New(cfg, kubeconfig.Options{})
	if err != nil {
		log.Fatal(err)
	}
	mgr, err := mcmanager.New(cfg, provider, mcmanager.Options{})
	if err != nil {
		log.Fatal(err)
	}
	// ... add controllers with mcbuilder.ControllerManagedBy(mgr) ...
	if err := mgr.Start(ctx); err != nil {
		log.Fatal(err)
	}
}

// Serve the Secrets written for multicluster-runtime's kubeconfig provider, from every
// namespace, naming clusters <namespace>/<name>, and accept exec plugins (for example cloud
// provider token helpers installed in the controller's image) but nothing else the hardened
// default refuses.
func ExampleNew_options() {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		log.Fatal(err)
	}
	provider, err := kubeconfig.New(cfg, kubeconfig.Options{
		AllNamespaces: true,
		SecretLabel:   kubeconfig.UpstreamSecretLabel,
		ClusterName:   kubeconfig.NamespacedSecretName,
		Options:       kit.Options{Policy: corekubeconfig.Policy{AllowExec: true}},
	})
	if err != nil {
		log.Fatal(err)
	}
	_ = provider // pass to mcmanager.New
}

// Share the manager's cache: the provider then reads Secrets through the manager's informer
// instead of starting one of its own.
func ExampleNewForHost() {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		log.Fatal(err)
	}
	local, err := ctrl.NewManager(cfg, ctrl.Options{})
	if err != nil {
		log.Fatal(err)
	}
	provider, err := kubeconfig.NewForHost(local, kubeconfig.Options{})
	if err != nil {
		log.Fatal(err)
	}
	mgr, err := mcmanager.WithMultiCluster(local, provider)
	if err != nil {
		log.Fatal(err)
	}
	_ = mgr // add controllers, then mgr.Start(ctx)
}
