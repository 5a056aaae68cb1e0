// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/envtest"
	"mcr.dev/examples/internal/exampletest"
)

var fleet *envtest.Fleet

func TestMain(m *testing.M) { os.Exit(exampletest.Main(m, &fleet, "hub", "east", "west")) }

// The whole pattern against real apiservers: spec down to every member, status up to the host,
// drift in a member repaired, a member leaving the fleet dropped from the status, and the copies
// deleted through the finalizer when the source is deleted.
func TestMulticlusterAware(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "members")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	exampletest.WriteKubeconfig(t, dir, "east.kubeconfig", fleet.Member("east"))
	westFile := exampletest.WriteKubeconfig(t, dir, "west.kubeconfig", fleet.Member("west"))
	members := map[string]client.Client{
		"east.kubeconfig+east": exampletest.Client(t, fleet.Member("east").Config()),
		"west.kubeconfig+west": exampletest.Client(t, fleet.Member("west").Config()),
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	host, err := client.New(fleet.Member("hub").Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}

	kubeconfig := exampletest.WriteKubeconfig(t, t.TempDir(), "hub.kubeconfig", fleet.Member("hub"))
	p := exampletest.Start(t, func(ctx context.Context) error {
		return run(ctx, []string{
			"-kubeconfig", kubeconfig, "-fleet", dir + "/",
			"-metrics-bind-address", "0", "-health-probe-bind-address", "0", "-zap-log-level", "error",
			// West leaves the fleet holding a copy: give up on it soon, so the source can go.
			"-give-up-after", "2s",
		})
	})
	// The example installs its CRD; create the source once it is served.
	if err := host.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}); err != nil {
		t.Fatal(err)
	}
	src := &FleetConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "settings"},
		Spec:       FleetConfigMapSpec{Data: map[string]string{"log-level": "info"}},
	}
	p.Eventually(t, "FleetConfigMap created", func(ctx context.Context) error { return host.Create(ctx, src) })
	key := client.ObjectKeyFromObject(src)

	// Spec down, status up.
	p.Eventually(t, "copies in every member", copiesHave(members, key, map[string]string{"log-level": "info"}))
	p.Eventually(t, "status of both members", statusIs(host, key, "east.kubeconfig+east", "west.kubeconfig+west"))
	if err := host.Get(t.Context(), key, src); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(src.Finalizers, finalizer) {
		t.Errorf("finalizers = %v, want %s", src.Finalizers, finalizer)
	}

	// A spec change reaches every member.
	src.Spec.Data = map[string]string{"log-level": "debug"}
	if err := host.Update(t.Context(), src); err != nil {
		t.Fatal(err)
	}
	p.Eventually(t, "updated copies", copiesHave(members, key, map[string]string{"log-level": "debug"}))
	p.Eventually(t, "status of the new generation", statusIs(host, key, "east.kubeconfig+east", "west.kubeconfig+west"))

	// A copy deleted in a member is put back.
	west := members["west.kubeconfig+west"]
	if err := west.Delete(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "settings"}}); err != nil {
		t.Fatal(err)
	}
	p.Eventually(t, "west's copy restored", copiesHave(members, key, map[string]string{"log-level": "debug"}))

	// West refuses the copy: the status names it and the API server's reason.
	denyCopies(t, west)
	if err := west.Delete(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "settings"}}); err != nil {
		t.Fatal(err)
	}
	p.Eventually(t, "west failing in the status", func(ctx context.Context) error {
		f := &FleetConfigMap{}
		if err := host.Get(ctx, key, f); err != nil {
			return err
		}
		summary := meta.FindStatusCondition(f.Status.Conditions, "FleetSynced")
		const want = "Synced 1/2, failing: west.kubeconfig+west (Forbidden)"
		if summary == nil || summary.Status != metav1.ConditionFalse || summary.Message != want || f.Status.ReadyClusters != 1 {
			return fmt.Errorf("summary %+v, ready %d; want False %q", summary, f.Status.ReadyClusters, want)
		}
		return nil
	})

	// West leaves the fleet: it drops out of the status (its copy stays: it is out of reach).
	if err := os.Remove(westFile); err != nil {
		t.Fatal(err)
	}
	p.Eventually(t, "status without west", statusIs(host, key, "east.kubeconfig+east"))

	// Deleting the source deletes the copies of the members, then the source; west, gone with
	// its copy, is given up after -give-up-after.
	if err := host.Delete(t.Context(), src); err != nil {
		t.Fatal(err)
	}
	p.Eventually(t, "source gone", func(ctx context.Context) error {
		err := host.Get(ctx, key, &FleetConfigMap{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("FleetConfigMap still there (%v)", err)
	})
	if err := members["east.kubeconfig+east"].Get(t.Context(), key, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("east's copy after the source was deleted: %v, want not found", err)
	}
	p.Stop(t)
}

// denyCopies makes the member refuse ConfigMaps named settings (Forbidden), with a
// ValidatingAdmissionPolicy, and waits until the policy is in force.
func denyCopies(t *testing.T, c client.Client) {
	t.Helper()
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "no-settings"},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
					Rule:       admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
				},
			}}},
			Validations: []admissionv1.Validation{{
				Expression: "object.metadata.name != 'settings'",
				Message:    "settings are managed elsewhere here",
				Reason:     ptr.To(metav1.StatusReasonForbidden),
			}},
		},
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "no-settings"},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        policy.Name,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
		},
	}
	for _, obj := range []client.Object{policy, binding} {
		if err := c.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
	// Policies take effect asynchronously: probe with a dry run until one is refused.
	deadline := time.Now().Add(30 * time.Second)
	for {
		probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings"}}
		err := c.Create(t.Context(), probe, client.DryRunAll)
		if apierrors.IsForbidden(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the ValidatingAdmissionPolicy is not in force: a dry-run create returned %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func copiesHave(members map[string]client.Client, key client.ObjectKey, data map[string]string) func(context.Context) error {
	return func(ctx context.Context) error {
		for name, c := range members {
			cm := &corev1.ConfigMap{}
			if err := c.Get(ctx, key, cm); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if !maps.Equal(cm.Data, data) {
				return fmt.Errorf("%s: data %v, want %v", name, cm.Data, data)
			}
		}
		return nil
	}
}

// statusIs checks the status the fleetstatus aggregator keeps: every member listed is in sync,
// the counts say so, and the summary condition is True for the current generation.
func statusIs(host client.Client, key client.ObjectKey, clusters ...string) func(context.Context) error {
	return func(ctx context.Context) error {
		f := &FleetConfigMap{}
		if err := host.Get(ctx, key, f); err != nil {
			return err
		}
		var names []string
		for _, c := range f.Status.Clusters {
			if c.Type != "Synced" || c.Status != metav1.ConditionTrue {
				return fmt.Errorf("cluster %s: %s %s %s: %s", c.Cluster, c.Type, c.Status, c.Reason, c.Message)
			}
			if c.ObservedGeneration != f.Generation {
				return fmt.Errorf("cluster %s: observedGeneration %d, generation %d", c.Cluster, c.ObservedGeneration, f.Generation)
			}
			names = append(names, c.Cluster)
		}
		if !slices.Equal(names, clusters) {
			return fmt.Errorf("clusters %v, want %v", names, clusters)
		}
		n := int32(len(clusters))
		if f.Status.ReadyClusters != n || f.Status.TotalClusters != n {
			return fmt.Errorf("counts %d/%d, want %d/%d", f.Status.ReadyClusters, f.Status.TotalClusters, n, n)
		}
		summary := meta.FindStatusCondition(f.Status.Conditions, "FleetSynced")
		want := fmt.Sprintf("Synced %d/%d", n, n)
		if summary == nil || summary.Status != metav1.ConditionTrue || summary.Message != want {
			return fmt.Errorf("summary %+v, want True %q", summary, want)
		}
		if summary.ObservedGeneration != f.Generation {
			return fmt.Errorf("summary observedGeneration %d, generation %d", summary.ObservedGeneration, f.Generation)
		}
		return nil
	}
}
