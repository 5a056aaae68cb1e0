// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package clusterprofile is a cluster provider that engages one cluster for every ready
// ClusterProfile (multicluster.x-k8s.io/v1alpha1, the Cluster Inventory API of KEP-4322) on a
// hub cluster, and exposes each member's KEP-2149 identity (Provider.Identity).
//
// It watches, on the hub, the ClusterProfiles of Options.Namespaces and, with the deprecated
// Secret strategy (Options.Secret), the Secrets labeled for its consumer. A member's credentials
// come from the operator's KEP-5339 access providers (Options.AccessProviders, the provider file
// of RegisterProviderFileFlag): the first exec credential plugin, in file order, that the
// profile's status.accessProviders lists, run by client-go against the profile's server; or from
// the kubeconfig Secret, loaded under the hardened Policy. A selected profile is engaged once
// Options.IsReady says so (by default: ControlPlaneHealthy), engaged again at once when its
// server, CA or plugin changes, and disengaged when it is deleted or has stayed unready for
// Options.UnreadyGracePeriod.
//
// A cluster is named "<namespace>/<name>" after its ClusterProfile (ClusterName, ClusterKey), as
// in multicluster-runtime's cluster-inventory-api provider; names are stable across restarts.
//
// Create the provider with New, which runs a cache of its own on the hub, or with NewForHost,
// which reads through a cache you run, and hand it to the manager, which starts it; no
// SetupWithManager is needed. Options embeds kit.Options (mcr.dev/core/providers/kit), the
// fields every provider shares; the provider runs on that kit's engine and engage step. Package
// plugin helps write exec credential plugins, and cmd/clusterprofile-token-plugin is one.
//
// docs/providers/clusterprofile.md in the mcr repository is the full reference: access providers
// and the Secret strategy, readiness, identity, Events, metrics and troubleshooting, RBAC, options.
package clusterprofile
