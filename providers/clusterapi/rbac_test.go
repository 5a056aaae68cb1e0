// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterapi_test

import (
	"context"
	"testing"

	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/clusterapi"
)

// TestRBACManifest runs the provider as a ServiceAccount that has exactly the permissions of
// config/rbac.yaml on the management cluster: it must engage Clusters and record their Events
// (providertest.RunMemberManifestTest). The manifest is quoted in docs/providers/clusterapi.md
// only, and `make verify-docs` keeps that quote identical to the file.
func TestRBACManifest(t *testing.T) {
	providertest.RunMemberManifestTest(t, rbacClusters(t))
}

// TestEachPermissionIsNeeded runs the provider, for every permission of config/rbac.yaml, with
// the manifest's rules less that one permission, on the management cluster and on one without
// streaming lists, and shows that something it does with all of them fails then
// (providertest.RunMemberPermissionTests).
func TestEachPermissionIsNeeded(t *testing.T) {
	providertest.RunMemberPermissionTests(t, rbacClusters(t))
}

// rbacClusters is the permission test of ready Clusters, each with its kubeconfig Secret, in a
// namespace the provider is restricted to.
func rbacClusters(t *testing.T) providertest.MemberPermissionTest {
	return providertest.MemberPermissionTest{
		Rules:   providertest.MustManifestRules(t, "config/rbac.yaml", "ClusterRole"),
		Host:    fleet.Member("mgmt"),
		Install: installCRD, Scheme: scheme,
		Members: [2]*envtest.Member{fleet.Member("east"), fleet.Member("west")},
		New: func(cfg *rest.Config, ns string, o kit.Options) (multicluster.ProviderRunnable, error) {
			return clusterapi.New(cfg, clusterapi.Options{Namespaces: []string{ns}, Options: o})
		},
		Add: func(ctx context.Context, c client.Client, ns, name string, kubeconfig []byte) (multicluster.ClusterName, error) {
			return clusterapi.ClusterName(ns, name), createReadyCluster(ctx, c, ns, name, kubeconfig)
		},
	}
}
