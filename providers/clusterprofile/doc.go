// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package clusterprofile is a cluster provider that engages one cluster for every ready
// ClusterProfile (multicluster.x-k8s.io/v1alpha1, the Cluster Inventory API of KEP-4322) on a
// hub cluster, named "<namespace>/<name>" after the profile (ClusterName, ClusterKey). Members
// are reached through the operator's KEP-5339 access providers (Options.AccessProviders, loaded
// by RegisterProviderFileFlag), exec credential plugins the provider kit runs, or, deprecated,
// a kubeconfig Secret (Options.Secret); Provider.Identity returns a member's KEP-2149 identity.
//
// Create it with New (a cache of its own on the hub) or NewForHost (a cache you run) and hand it
// to the manager, which starts it. Options embeds kit.Options, the fields every provider shares.
// Package plugin helps write exec credential plugins; cmd/clusterprofile-token-plugin is one.
//
// See docs/providers/clusterprofile.md in the mcr repository: access providers and the Secret
// strategy, readiness and the grace period, identity, Events and troubleshooting, RBAC, options.
package clusterprofile
