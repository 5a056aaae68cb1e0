// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/clusterapi"
)

// TestRBACManifest runs the provider as a ServiceAccount that has exactly the permissions of
// config/rbac.yaml on the management cluster: it must engage a Cluster and record its Events.
// The manifest is quoted in docs/providers/clusterapi.md only, and `make verify-docs` keeps that
// quote identical to the file.
func TestRBACManifest(t *testing.T) {
	ns := namespace(t)
	cfg := providertest.ServiceAccountConfig(t, fleet.Member("mgmt"), envtest.ServiceAccountOptions{
		Name:         "clusterapi-provider",
		ClusterRules: providertest.MustManifestRules(t, "config/rbac.yaml", "ClusterRole"),
	})
	logs := &logBuffer{}
	p, err := clusterapi.New(cfg, clusterapi.Options{Namespaces: []string{ns}, Options: kit.Options{Logger: logs.Logger()}})
	if err != nil {
		t.Fatal(err)
	}
	s := runProvider(t, p, logs)
	c := readyCluster(t, ns, "rbac", "east")
	s.WaitEngaged(t, c.clusterName())
	waitEvent(t, c, kit.ReasonClusterEngaged)
}

// TestEachPermissionIsNeeded runs the provider, for every permission of config/rbac.yaml, with
// the manifest's rules less that one permission, and shows that something it does with all of
// them fails then: a Cluster present at start and one created later engaged, a ClusterEngaged
// Event recorded, and the Event series of a Cluster with two problems of one reason updated
// (patched); a Forbidden error logged for the provider's identity, or Start failing, counts as a
// failure too. Each runs on the shared management cluster and on one without streaming lists
// (WatchList off, as API servers before 1.34 or with the feature disabled), where informers
// list and then watch. A control run with every rule must do all of it on both.
func TestEachPermissionIsNeeded(t *testing.T) {
	// Namespaces and identities of its own: it runs alongside the other parallel tests.
	t.Parallel()
	rules := providertest.MustManifestRules(t, "config/rbac.yaml", "ClusterRole")
	legacy := envtest.StartForTestWithOptions(t, envtest.Options{
		Members:        []string{"legacy"},
		APIServerFlags: map[string]string{"feature-gates": "WatchList=false"},
	}).Member("legacy")
	if err := installCRD(t.Context(), legacy.Config()); err != nil {
		t.Fatal(err)
	}
	hosts := map[string]*envtest.Member{"mgmt": fleet.Member("mgmt"), "no streaming lists": legacy}
	providertest.RunPermissionTests(t, providertest.PermissionTest{
		Rules:    rules,
		Variants: []string{"mgmt", "no streaming lists"},
		Scenario: func(t *testing.T, c providertest.PermissionCase, host string) []string {
			return rbacScenario(t, hosts[host], c.Rules)
		},
	})
}

// rbacWindow is how long the RBAC scenario waits for each thing the provider does.
const rbacWindow = 10 * time.Second

var rbacNamespaces atomic.Int32

// rbacScenario runs the provider on host as a ServiceAccount with exactly rules (cluster-wide),
// restricted to a namespace of its own, and returns what failed.
func rbacScenario(t *testing.T, host *envtest.Member, rules []rbacv1.PolicyRule) []string {
	cl, err := client.New(host.Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ns := fmt.Sprintf("rbac-%d", rbacNamespaces.Add(1))
	if err := cl.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	cfg := providertest.ServiceAccountConfig(t, host, envtest.ServiceAccountOptions{Namespace: ns, Name: "provider", ClusterRules: rules})
	ready := func(name string, kubeconfig []byte) {
		t.Helper()
		if err := createReadyCluster(t.Context(), cl, ns, name, kubeconfig); err != nil {
			t.Fatal(err)
		}
	}

	logs := &logBuffer{}
	p, err := clusterapi.New(cfg, clusterapi.Options{Namespaces: []string{ns}, Options: providertest.TestKitOptions(kit.Options{CacheSyncTimeout: rbacWindow}, logs)})
	if err != nil {
		t.Fatal(err)
	}
	ready("before", fleet.Member("east").Kubeconfig())
	// Start may fail here (a cache that cannot sync), which is one of the failures to show.
	trial := providertest.StartTrial(t, p, rbacWindow, time.Minute)
	ready("after", fleet.Member("west").Kubeconfig())
	flaky := &atomic.Int32{}
	flaky.Store(http.StatusInternalServerError)
	ready("flaky", providertest.FailingMember(t, flaky))

	providertest.MemberPermissionSteps(trial, providertest.MemberSteps{
		Before: clusterapi.ClusterName(ns, "before"), After: clusterapi.ClusterName(ns, "after"),
		Flaky: clusterapi.ClusterName(ns, "flaky"), Status: flaky,
		Events: func(member multicluster.ClusterName, reason string) int32 {
			_, name, _ := strings.Cut(string(member), "/")
			return providertest.EventCount(t.Context(), cl, ns, providertest.EventTarget{Name: name}, reason)
		},
	})
	trial.FailForbidden(fmt.Sprintf("system:serviceaccount:%s:provider", ns), logs, &providertest.ProcessLogs)
	return trial.Failures()
}
