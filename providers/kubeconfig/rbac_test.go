// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kubeconfig_test

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/kubeconfig"
)

// TestDocumentedRBACIsEnough runs the provider with a host identity that has exactly the rules of
// config/rbac.yaml (the manifest README.md points to) and nothing else.
func TestDocumentedRBACIsEnough(t *testing.T) {
	rules := providertest.MustManifestRules(t, "config/rbac.yaml", "Role")

	ns := newNamespace(t)
	hostConfig := providertest.ServiceAccountConfig(t, fleet.Member("hub"), envtest.ServiceAccountOptions{
		Namespace: ns, Name: "provider", Rules: rules, ClusterRules: []rbacv1.PolicyRule{},
	})

	p, err := newProviderFor(hostConfig, testOptions(ns))
	if err != nil {
		t.Fatal(err)
	}
	aware := newRecordingAware()
	startProvider(t, p, aware)
	putSecret(t, ns, "m1", fleet.Member("m1").Kubeconfig())
	if err := canListNamespaces(t.Context(), aware.waitEngaged(t, "m1", 1)); err != nil {
		t.Fatal(err)
	}
	// Events are written with the same identity.
	waitEvent(t, ns, "m1", "ClusterEngaged")
}

// TestEachPermissionIsNeeded runs the provider, for every permission of config/rbac.yaml, with
// the manifest's rules less that one permission, and shows that something it does with all of
// them fails then: a Secret present at start and one created later engaged, a ClusterEngaged
// Event recorded, and the Event series of a Secret with two problems of one reason updated
// (patched); a Forbidden error logged for the provider's identity counts as a failure too. Each
// runs on the shared hub and on a host without streaming lists (WatchList off, as API servers
// before 1.34 or with the feature disabled), where informers list and then watch. A control run
// with every rule must do all of it on both without a Forbidden error.
func TestEachPermissionIsNeeded(t *testing.T) {
	// Namespaces and identities of its own: it runs alongside the other parallel tests.
	t.Parallel()
	rules := providertest.MustManifestRules(t, "config/rbac.yaml", "Role")
	legacy := envtest.StartForTestWithOptions(t, envtest.Options{
		Members:        []string{"legacy"},
		APIServerFlags: map[string]string{"feature-gates": "WatchList=false"},
	}).Member("legacy")
	hosts := map[string]*envtest.Member{"hub": fleet.Member("hub"), "no streaming lists": legacy}
	providertest.RunPermissionTests(t, providertest.PermissionTest{
		Rules:    rules,
		Variants: []string{"hub", "no streaming lists"},
		Scenario: func(t *testing.T, c providertest.PermissionCase, host string) []string {
			return rbacScenario(t, hosts[host], c.Rules)
		},
	})
}

// rbacWindow is how long the RBAC scenario waits for each thing the provider does.
const rbacWindow = 10 * time.Second

// rbacScenario runs the provider on host as a ServiceAccount with exactly rules in a namespace
// of its own and returns what failed.
func rbacScenario(t *testing.T, host *envtest.Member, rules []rbacv1.PolicyRule) []string {
	cs := kubernetes.NewForConfigOrDie(host.Config())
	events, err := client.New(host.Config(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ns := fmt.Sprintf("rbac-%d", namespaces.Add(1))
	if _, err := cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hostConfig := providertest.ServiceAccountConfig(t, host, envtest.ServiceAccountOptions{
		Namespace: ns, Name: "provider", Rules: rules, ClusterRules: []rbacv1.PolicyRule{},
	})
	put := func(name string, data []byte) {
		t.Helper()
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{kubeconfig.DefaultSecretLabel: "true"}},
			Data:       map[string][]byte{kubeconfig.DefaultSecretKey: data},
		}
		if _, err := cs.CoreV1().Secrets(ns).Create(t.Context(), s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	var plogs providertest.LogBuffer
	opts := testOptions(ns)
	opts.CacheSyncTimeout = rbacWindow
	opts.Logger = plogs.Logger()
	p, err := newProviderFor(hostConfig, opts)
	if err != nil {
		t.Fatal(err)
	}
	put("before", fleet.Member("m1").Kubeconfig())
	// Start may fail here (a cache that cannot sync), which is one of the failures to show.
	trial := providertest.StartTrial(t, p, rbacWindow, time.Minute)
	put("after", fleet.Member("m2").Kubeconfig())
	flaky := &atomic.Int32{}
	flaky.Store(http.StatusInternalServerError)
	put("flaky", providertest.FailingMember(t, flaky))

	providertest.MemberPermissionSteps(trial, providertest.MemberSteps{
		Before: "before", After: "after", Flaky: "flaky", Status: flaky,
		Events: func(member multicluster.ClusterName, reason string) int32 {
			return providertest.EventCount(t.Context(), events, ns, providertest.EventTarget{Name: string(member)}, reason)
		},
	})
	trial.FailForbidden(fmt.Sprintf("system:serviceaccount:%s:provider", ns), &plogs, &logs.LogBuffer)
	return trial.Failures()
}
