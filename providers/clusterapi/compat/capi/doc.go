// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package capi is multicluster-runtime v0.24.1's Cluster API provider API on mcr's Cluster API
// provider (mcr.dev/providers/clusterapi). It is the import path the sed of docs/migration.md
// maps sigs.k8s.io/multicluster-runtime/providers/cluster-api to, so that a program written for
// that provider compiles unchanged and behaves as its documentation says: New(Options) before
// the manager, SetupWithManager(mgr) after it, one cluster for every Cluster API Cluster of the
// manager's cluster (the management cluster) whose control plane is initialized, named
// "<namespace>/<name>" after the Cluster and reached through the kubeconfig Secret
// "<name>-kubeconfig" (data key "value") that Cluster API keeps next to it.
//
// How the options map onto mcr's clusterapi.Options:
//
//   - ObjectToWatch picks APIVersion: nil or a *v1beta2.Cluster is V1Beta2, a *v1beta1.Cluster
//     V1Beta1. Any other type has no counterpart.
//   - IsReady becomes IsReady, and receives a Cluster of that version. Its default,
//     clusterapi.ControlPlaneInitialized, is what upstream documents (the control plane is
//     initialized) for both versions; upstream's own default is false for every v1beta1 Cluster.
//   - ClusterOptions becomes ClusterOptions.
//   - GetSecret and NewCluster have no counterpart: mcr's provider reads the kubeconfig Secret
//     itself (and watches it) and builds and runs member clusters itself.
//
// New cannot fail (it has upstream's signature), so options without a counterpart make
// SetupWithManager fail, with an error that names them; the provider then serves nothing.
//
// Upstream's provider is a controller on the manager's local cluster (its Reconcile method)
// and reads Clusters and Secrets through the manager's client. Here SetupWithManager builds mcr's
// provider from the config of mgr.GetLocalManager(), and the manager starts it (Start): it
// watches the management cluster with a cache of its own that holds only Clusters and the
// Secrets labeled cluster.x-k8s.io/cluster-name, so the manager's scheme need not hold the
// Cluster type, the manager's cache may exclude Secrets, and there is no Reconcile method. Its
// RBAC is that of providers/clusterapi/config/rbac.yaml: list and watch on Clusters and
// Secrets, and create and patch on events.k8s.io Events. Until SetupWithManager has run the
// provider serves no cluster, and indexes added to it (IndexField) are recorded and applied
// then; a second SetupWithManager fails.
//
// mcr's provider behaves differently from upstream's in ways docs/providers/clusterapi.md
// describes:
//
//   - the kubeconfig Secret must carry the label cluster.x-k8s.io/cluster-name=<cluster>, as
//     Cluster API's own Secrets do; a Secret without it is reported (KubeconfigSecretMissing);
//   - a rotated kubeconfig is engaged again at once (the Secret is watched), and only when the
//     endpoint or credentials changed;
//   - a Cluster that stops being ready is disengaged; upstream's keeps it engaged;
//   - a member's access is checked (a SelfSubjectReview) before it is engaged, Clusters are
//     engaged in parallel with bounded waits, and one that cannot be engaged gets a Warning
//     Event on the Cluster and is retried with backoff;
//   - kubeconfigs are loaded under mcr's default kubeconfig.Policy, which refuses exec and
//     auth-provider plugins, local file references and insecure-skip-tls-verify (the
//     kubeconfigs Cluster API writes carry inline credentials);
//   - Get's error wraps multicluster.ErrClusterNotFound instead of being it (errors.Is holds).
//
// New programs should use mcr.dev/providers/clusterapi, whose Options reach all of that
// (Namespaces, Selector, InfrastructureKinds, Filter, Policy, ...) and which needs no
// SetupWithManager.
package capi
