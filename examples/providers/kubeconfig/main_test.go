// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"mcr.dev/core/envtest"
	"mcr.dev/examples/internal/exampletest"
	"mcr.dev/providers/kubeconfig/enroll"
)

var fleet *envtest.Fleet

func TestMain(m *testing.M) { os.Exit(exampletest.Main(m, &fleet, "hub", "east", "west")) }

// The example engages the members enrolled as kubeconfig Secrets on the hub, one of them while
// it runs, with least-privilege ServiceAccount credentials, and the controller reaches each under
// the Secret's name.
func TestKubeconfigProviderExample(t *testing.T) {
	hub := fleet.Member("hub")
	east := exampletest.Client(t, fleet.Member("east").Config())
	west := exampletest.Client(t, fleet.Member("west").Config())
	exampletest.SeedMarked(t, east, "demo", "hello")
	exampletest.SeedMarked(t, west, "demo", "hello")

	// What the marker needs on a member, and nothing else.
	rules := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch", "patch"}}}
	enrollMember := func(name string) {
		t.Helper()
		if _, err := enroll.Member(t.Context(), fleet.Member(name).Config(), hub.Config(), enroll.Options{SecretName: name, ClusterRules: rules}); err != nil {
			t.Fatalf("enrolling %s: %v", name, err)
		}
	}
	// The namespace the provider watches on the hub.
	if err := exampletest.Client(t, hub.Config()).Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "mcr-system"}}); err != nil {
		t.Fatal(err)
	}
	enrollMember("east")

	kubeconfig := exampletest.WriteKubeconfig(t, t.TempDir(), "hub.kubeconfig", hub)
	p := exampletest.Start(t, func(ctx context.Context) error {
		return run(ctx, []string{
			"-kubeconfig", kubeconfig, "-namespace", "mcr-system", "-retry-max-delay", "2s",
			"-metrics-bind-address", "0", "-health-probe-bind-address", "0", "-zap-log-level", "error",
		})
	})
	p.Eventually(t, "east marked", exampletest.MarkedBy(east, "demo", "hello", "east"))

	enrollMember("west")
	p.Eventually(t, "west marked", exampletest.MarkedBy(west, "demo", "hello", "west"))
	p.Stop(t)
}
