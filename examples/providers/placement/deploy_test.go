// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/examples/internal/exampletest"
)

// The rendered dist/install.yaml applies to the hub with server-side apply; the binary, built
// with the Dockerfile's own go build line, runs with the Deployment's args and exactly the
// ServiceAccount's permissions (a token minted for it): it is elected leader and records the
// Event, engages the ClusterProfile registered on the hub and placed by the decision it follows
// (--decision-key=web) through the access provider, marks the member's ConfigMap, records
// ClusterEngaged, and its probes answer. Without any one rule of
// the manifest's RBAC, the step that rule is for fails. The access provider file is the
// ConfigMap's format with the reference plugin built here; the plugin reads member tokens with
// credentials of its own, as an operator's plugin does.
func TestDeployedWithManifestRBAC(t *testing.T) {
	binary := filepath.Join(t.TempDir(), "manager")
	exampletest.BuildFromDockerfile(t, "Dockerfile", "../../..", "./examples/providers/placement", binary)
	manifest := exampletest.LoadManifest(t, "dist/install.yaml")
	namespace := manifest.Deployment(t).Namespace
	const profiles, tokens = "deployed-fleet", "deployed-tokens"

	hub := hubClient(t)
	east := exampletest.Client(t, fleet.Member("east").Config())
	exampletest.SeedMarked(t, east, "deployed", "hello")
	for _, ns := range []string{profiles, tokens} {
		if err := hub.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	pluginKubeconfig := exampletest.WriteKubeconfig(t, dir, "plugin.kubeconfig", fleet.Member("hub"))
	providerFile, err := json.Marshal(map[string]any{"providers": []any{map[string]any{
		"name": "mcr-token",
		"execConfig": map[string]any{
			"apiVersion": "client.authentication.k8s.io/v1", "command": pluginPath,
			"args": []string{"-kubeconfig", pluginKubeconfig, "-namespace", tokens}, "provideClusterInfo": true,
		},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	providerFilePath := filepath.Join(dir, "providers.json")
	if err := os.WriteFile(providerFilePath, providerFile, 0o600); err != nil {
		t.Fatal(err)
	}
	register(t, hub, "east", profiles, tokens)
	// The scheduler stand-in places east by the decision the Deployment follows (--decision-key=web).
	if err := run(t.Context(), []string{"schedule", "-kubeconfig", pluginKubeconfig, "-namespace", profiles, "-decision-key", "web", "east"}); err != nil {
		t.Fatal(err)
	}

	exampletest.DeployTest{
		Manifest:  manifest,
		Host:      fleet.Member("hub"),
		Binary:    binary,
		ExtraArgs: []string{"--clusterprofile-provider-file=" + providerFilePath},
		Steps: func(probes string) []exampletest.Step {
			return []exampletest.Step{
				{Name: "leader election", Cond: leaseHeld(hub, namespace, leaderElectionID)},
				{Name: "LeaderElection Event (core API)", Cond: coreEvent(hub, namespace, "LeaderElection", "Lease", leaderElectionID)},
				{Name: "watch ClusterProfiles and PlacementDecisions, engage, reconcile", Cond: exampletest.MarkedBy(east, "deployed", "hello", profiles+"/east")},
				{Name: "ClusterEngaged Event (events.k8s.io)", Cond: engagedEvent(hub, profiles, "east")},
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
				hub.DeleteAllOf(t.Context(), &corev1.Event{}, client.InNamespace(profiles)),
			); err != nil {
				t.Fatal(err)
			}
			unmark(t, east, "deployed", "hello")
		},
		Breaks: map[string]string{
			"coordination.k8s.io/leases":               "leader election",
			"/events":                                  "LeaderElection Event (core API)",
			"multicluster.x-k8s.io/clusterprofiles":    "watch ClusterProfiles and PlacementDecisions, engage, reconcile",
			"multicluster.x-k8s.io/placementdecisions": "watch ClusterProfiles and PlacementDecisions, engage, reconcile",
			"events.k8s.io/events":                     "ClusterEngaged Event (events.k8s.io)",
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

// engagedEvent returns a condition: an events.k8s.io Event ClusterEngaged regards the
// ClusterProfile namespace/name.
func engagedEvent(c client.Client, namespace, name string) func(context.Context) error {
	return func(ctx context.Context) error {
		list := &eventsv1.EventList{}
		if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
			return err
		}
		for _, e := range list.Items {
			if e.Reason == "ClusterEngaged" && e.Regarding.Kind == "ClusterProfile" && e.Regarding.Name == name {
				return nil
			}
		}
		return errors.New("no ClusterEngaged Event on ClusterProfile " + namespace + "/" + name)
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
