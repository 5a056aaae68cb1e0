// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kubeconfig_test

import (
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/kubeconfig"
)

// runManager starts mgr until the test ends.
func runManager(t *testing.T, mgr mcmanager.Manager) {
	t.Helper()
	providertest.RunInBackground(t, "manager", time.Minute, mgr.Start)
}

// waitCluster waits until the manager serves the named cluster and checks it reaches its member.
func waitCluster(t *testing.T, mgr mcmanager.Manager, name multicluster.ClusterName) {
	t.Helper()
	eventually(t, waitTimeout, "manager serves cluster "+string(name), func() error {
		cl, err := mgr.GetCluster(t.Context(), name)
		if err != nil {
			return err
		}
		var list corev1.NamespaceList
		return cl.GetClient().List(t.Context(), &list)
	})
}

var managerOptions = mcmanager.Options{
	Metrics:                metricsserver.Options{BindAddress: "0"},
	HealthProbeBindAddress: "0",
}

// The default set-up: the manager starts the provider; no SetupWithManager.
func TestRunsUnderManager(t *testing.T) {
	ns := newNamespace(t)
	p := newProvider(t, testOptions(ns))
	mgr, err := mcmanager.New(fleet.Member("hub").Config(), p, managerOptions)
	if err != nil {
		t.Fatal(err)
	}
	runManager(t, mgr)
	putSecret(t, ns, "m1", fleet.Member("m1").Kubeconfig())
	waitCluster(t, mgr, "m1")
}

// NewForHost shares the manager's cache instead of starting a host cluster of its own.
func TestRunsOnManagerCache(t *testing.T) {
	ns := newNamespace(t)
	local, err := manager.New(fleet.Member("hub").Config(), managerOptions)
	if err != nil {
		t.Fatal(err)
	}
	p, err := kubeconfig.NewForHost(local, testOptions(ns))
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := mcmanager.WithMultiCluster(local, p)
	if err != nil {
		t.Fatal(err)
	}
	runManager(t, mgr)

	putSecret(t, ns, "m2", fleet.Member("m2").Kubeconfig())
	// The shared cache holds Secrets of every namespace; only the provider's namespace counts.
	putSecret(t, newNamespace(t), "elsewhere", fleet.Member("m1").Kubeconfig())
	waitCluster(t, mgr, "m2")
	// Events are recorded with the manager's recorder.
	waitEvent(t, ns, "m2", kit.ReasonClusterEngaged)
	if _, err := mgr.GetCluster(t.Context(), "elsewhere"); !errors.Is(err, multicluster.ErrClusterNotFound) {
		t.Errorf("GetCluster(elsewhere) = %v, want ErrClusterNotFound", err)
	}

	// Removing the label disengages, through the shared cache's update event.
	s := putSecret(t, ns, "m2", fleet.Member("m2").Kubeconfig())
	s.Labels = nil
	if _, err := hub.CoreV1().Secrets(ns).Update(t.Context(), s, updateOptions); err != nil {
		t.Fatal(err)
	}
	eventually(t, waitTimeout, "m2 disengaged", func() error {
		if _, err := mgr.GetCluster(t.Context(), "m2"); !errors.Is(err, multicluster.ErrClusterNotFound) {
			return errors.New("still served")
		}
		return nil
	})
}
