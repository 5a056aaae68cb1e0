// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/examples/internal/exampletest"
	"mcr.dev/providers/kubeconfig/enroll"
)

// The rendered dist/install.yaml applies to the hub with server-side apply; the binary, built
// with the Dockerfile's own go build line, runs with the Deployment's args and exactly the
// ServiceAccount's permissions (a token minted for it) and does every step: leader election and
// its Event, engaging the member enrolled as a Secret in its namespace and marking its
// ConfigMap, the ClusterEngaged Event, the probes. Without any one rule of the manifest's RBAC,
// the step that rule is for fails.
func TestDeployedWithManifestRBAC(t *testing.T) {
	binary := filepath.Join(t.TempDir(), "manager")
	exampletest.BuildFromDockerfile(t, "Dockerfile", "../../..", "./examples/providers/kubeconfig", binary)
	manifest := exampletest.LoadManifest(t, "dist/install.yaml")
	namespace := manifest.Deployment(t).Namespace
	hubMember := fleet.Member("hub")
	hub := exampletest.Client(t, hubMember.Config())
	east := exampletest.Client(t, fleet.Member("east").Config())

	manifest.Apply(t, hub) // the namespace, where east is enrolled
	exampletest.SeedMarked(t, east, "deployed", "hello")
	if _, err := enroll.Member(t.Context(), fleet.Member("east").Config(), hubMember.Config(), enroll.Options{
		SecretName: "east", SecretNamespace: namespace,
		ClusterRules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch", "patch"}}},
	}); err != nil {
		t.Fatalf("enrolling east: %v", err)
	}

	exampletest.DeployTest{
		Manifest: manifest,
		Host:     hubMember,
		Binary:   binary,
		Steps: func(probes string) []exampletest.Step {
			return []exampletest.Step{
				{Name: "leader election", Cond: leaseHeld(hub, namespace, leaderElectionID)},
				{Name: "LeaderElection Event (core API)", Cond: coreEvent(hub, namespace, "LeaderElection", "Lease", leaderElectionID)},
				{Name: "watch kubeconfig Secrets, engage, reconcile", Cond: exampletest.MarkedBy(east, "deployed", "hello", "east")},
				{Name: "ClusterEngaged Event (events.k8s.io)", Cond: engagedEvent(hub, namespace, "Secret", "east")},
				{Name: "liveness probe", Cond: exampletest.HTTPOK("http://" + probes + "/healthz")},
				{Name: "readiness probe with the fleet check", Cond: exampletest.HTTPOK("http://" + probes + "/readyz")},
			}
		},
		Reset: func(t *testing.T) {
			t.Helper()
			// A new process would wait for the old leader's Lease to expire.
			if err := errors.Join(
				hub.DeleteAllOf(t.Context(), &coordinationv1.Lease{}, client.InNamespace(namespace)),
				hub.DeleteAllOf(t.Context(), &corev1.Event{}, client.InNamespace(namespace)),
			); err != nil {
				t.Fatal(err)
			}
			unmark(t, east, "deployed", "hello")
		},
		Breaks: map[string]string{
			"coordination.k8s.io/leases": "leader election",
			"/events":                    "LeaderElection Event (core API)",
			"/secrets":                   "watch kubeconfig Secrets, engage, reconcile",
			"events.k8s.io/events":       "ClusterEngaged Event (events.k8s.io)",
		},
	}.Run(t)
}

// leaseHeld returns a condition: the Lease namespace/name has a holder.
func leaseHeld(c client.Client, namespace, name string) func(context.Context) error {
	return func(ctx context.Context) error {
		lease := &coordinationv1.Lease{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, lease); err != nil {
			return err
		}
		if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
			return fmt.Errorf("Lease %s/%s has no holder", namespace, name)
		}
		return nil
	}
}

// coreEvent returns a condition: a core Event with reason regards kind/name in namespace.
func coreEvent(c client.Client, namespace, reason, kind, name string) func(context.Context) error {
	return func(ctx context.Context) error {
		list := &corev1.EventList{}
		if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
			return err
		}
		for _, e := range list.Items {
			if e.Reason == reason && e.InvolvedObject.Kind == kind && e.InvolvedObject.Name == name {
				return nil
			}
		}
		return fmt.Errorf("no %s Event on %s %s/%s", reason, kind, namespace, name)
	}
}

// engagedEvent returns a condition: an events.k8s.io Event ClusterEngaged regards kind/name.
func engagedEvent(c client.Client, namespace, kind, name string) func(context.Context) error {
	return func(ctx context.Context) error {
		list := &eventsv1.EventList{}
		if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
			return err
		}
		for _, e := range list.Items {
			if e.Reason == "ClusterEngaged" && e.Regarding.Kind == kind && e.Regarding.Name == name {
				return nil
			}
		}
		return fmt.Errorf("no ClusterEngaged Event on %s %s/%s", kind, namespace, name)
	}
}

// unmark removes the marker's annotation from a ConfigMap, so that a new run must mark it again.
func unmark(t *testing.T, c client.Client, namespace, name string) {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: namespace, Name: name}, cm); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(cm.DeepCopy())
	delete(cm.Annotations, markAnnotation)
	if err := c.Patch(t.Context(), cm, patch); err != nil {
		t.Fatal(err)
	}
}
