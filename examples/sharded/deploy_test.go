// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/examples/internal/exampletest"
)

// The rendered dist/install.yaml applies to the host with server-side apply; the binary, built
// with the Dockerfile's own go build line, runs as a replica with the Deployment's args (the
// fleet directory pointed at a local one, as the Secret volume would be) and exactly the
// ServiceAccount's permissions (a token minted for it): alone in its group, it takes every
// cluster's Lease and marks every member's ConfigMap, and its probes answer. Without the
// manifest's Lease rule, it engages nothing.
func TestDeployedWithManifestRBAC(t *testing.T) {
	binary := filepath.Join(t.TempDir(), "manager")
	exampletest.BuildFromDockerfile(t, "Dockerfile", "../..", "./examples/sharded", binary)
	manifest := exampletest.LoadManifest(t, "dist/install.yaml")
	namespace := manifest.Deployment(t).Namespace

	dir := filepath.Join(t.TempDir(), "fleet")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	clients := map[string]client.Client{}
	for _, m := range members {
		exampletest.WriteKubeconfig(t, dir, m+".kubeconfig", fleet.Member(m))
		clients[m] = exampletest.Client(t, fleet.Member(m).Config())
		exampletest.SeedMarked(t, clients[m], "deployed", "hello")
	}
	host := exampletest.Client(t, fleet.Member("a").Config())

	exampletest.DeployTest{
		Manifest:  manifest,
		Host:      fleet.Member("a"),
		Binary:    binary,
		ExtraArgs: []string{"--fleet=" + dir + "/"},
		Steps: func(probes string) []exampletest.Step {
			return []exampletest.Step{
				{Name: "sharding Leases, engage, reconcile", Cond: func(ctx context.Context) error {
					var errs []error
					for _, m := range members {
						errs = append(errs, exampletest.MarkedBy(clients[m], "deployed", "hello", m+".kubeconfig+"+m)(ctx))
					}
					return errors.Join(errs...)
				}},
				{Name: "liveness probe", Cond: exampletest.HTTPOK("http://" + probes + "/healthz")},
				{Name: "readiness probe with the fleet check", Cond: exampletest.HTTPOK("http://" + probes + "/readyz")},
			}
		},
		Reset: func(t *testing.T) {
			t.Helper()
			if err := host.DeleteAllOf(t.Context(), &coordinationv1.Lease{}, client.InNamespace(namespace)); err != nil {
				t.Fatal(err)
			}
			for _, m := range members {
				unmark(t, clients[m], "deployed", "hello")
			}
		},
		Breaks: map[string]string{
			"coordination.k8s.io/leases": "sharding Leases, engage, reconcile",
		},
	}.Run(t)
}

// unmark removes the marker's annotations from a ConfigMap, so that a new run must mark it again.
func unmark(t *testing.T, c client.Client, namespace, name string) {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: namespace, Name: name}, cm); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(cm.DeepCopy())
	delete(cm.Annotations, markAnnotation)
	delete(cm.Annotations, replicaAnnotation)
	if err := c.Patch(t.Context(), cm, patch); err != nil {
		t.Fatal(err)
	}
}
