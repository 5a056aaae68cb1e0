// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package clusterinventoryapi is multicluster-runtime v0.24.1's cluster-inventory-api provider
// API on mcr's clusterprofile provider (mcr.dev/providers/clusterprofile). It is the import path
// the sed of docs/migration.md maps sigs.k8s.io/multicluster-runtime/providers/cluster-inventory-api
// to (and .../kubeconfigstrategy to the package of that name below this one), so that a program
// written for that provider compiles unchanged and behaves as its documentation says: New(Options)
// before the manager, SetupWithManager(mgr) after it, one cluster for every ready ClusterProfile
// of the manager's cluster (the hub), named "<namespace>/<name>" after its profile, reached
// through the strategy of Options.KubeconfigStrategyOption.
//
// How the options map onto mcr's clusterprofile.Options:
//
//   - KubeconfigStrategyOption.AccessProvider.Provider (upstream main's name; v0.24.1's
//     CredentialsProvider is kept as a deprecated alias) becomes AccessProviders.
//     New checks it with clusterprofile.ValidateProviderConfig, which upstream does not: every
//     provider needs a unique name and an execConfig with a command and apiVersion
//     client.authentication.k8s.io/v1 or v1beta1, and the profile-sourced policies must be
//     known values.
//   - KubeconfigStrategyOption.Secret.ConsumerName becomes Secret.ConsumerName: the same
//     labels, namespace and "Config" key.
//   - Exactly one strategy must be set and its required field filled, or New fails, as
//     upstream's strategy factory does.
//   - ClusterOptions becomes ClusterOptions; IsReady becomes IsReady, with the same default
//     (the ControlPlaneHealthy condition is True).
//   - NewCluster has no counterpart: mcr's provider builds and runs member clusters itself.
//     New returns an error when it is set.
//
// Upstream's provider is a controller on the manager's local cluster (its Reconcile method) and
// reads ClusterProfiles and Secrets through the manager's cache. Here SetupWithManager builds
// mcr's provider from the config of mgr.GetLocalManager(), and the manager starts it (Start):
// it watches the hub with a cache of its own that holds only ClusterProfiles and, with the
// Secret strategy, the Secrets labeled for the consumer. The manager's scheme need not hold the
// ClusterProfile type, and there is no Reconcile method. Until SetupWithManager has run the
// provider serves no cluster, and indexes added to it (IndexField) are recorded and applied
// then.
//
// mcr's provider behaves differently from upstream's in ways its documentation describes
// (docs/providers/clusterprofile.md):
//
//   - an engaged profile that stops being ready is disengaged once it has stayed unready for
//     clusterprofile.DefaultUnreadyGracePeriod (one minute); upstream's keeps it engaged;
//   - a member's access is checked (a SelfSubjectReview) before it is engaged, and a member
//     that cannot be reached or engaged gets a Warning Event on its profile and is retried
//     with backoff while the others are engaged;
//   - credentials are compared by content: a profile is engaged again only when its server,
//     CA, exec plugin or kubeconfig changes, never for other changes of the profile;
//   - a Secret's kubeconfig is loaded under mcr's default kubeconfig.Policy, which refuses exec
//     and auth-provider plugins, local file references and insecure-skip-tls-verify; what a
//     profile says about its access provider (server, proxy, CA file, exec env) is checked
//     against the same Policy before the operator's plugin runs, and profile-sourced plugin
//     args and env are used only as each access provider's policies allow;
//   - Get's error wraps multicluster.ErrClusterNotFound instead of being it (errors.Is holds).
//
// New programs should use mcr.dev/providers/clusterprofile, whose Options reach all of that
// (Policy, UnreadyGracePeriod, Namespaces, Selector, both strategies at once, ...) and which
// needs no SetupWithManager.
package clusterinventoryapi
