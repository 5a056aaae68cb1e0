// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package kubeconfig is a cluster provider that engages one cluster for every kubeconfig Secret
// on a host cluster, and keeps the fleet in step with those Secrets as they are created,
// rotated, relabeled and deleted.
//
// It watches, on the host, the Secrets of Options.Namespace (default "mcr-system", or every
// namespace with Options.AllNamespaces) labeled Options.SecretLabel=true (default
// "mcr.dev/kubeconfig"); each member's credentials are the kubeconfig under the data key
// Options.SecretKey (default "kubeconfig"), loaded under the hardened Policy. A Secret's cluster
// is engaged once it answers with those credentials, engaged again at once when they change,
// and disengaged when the Secret is deleted or loses its label.
//
// A cluster is named "<name>" after its Secret (SecretName, as in multicluster-runtime), or
// "<namespace>/<name>" with Options.ClusterName = NamespacedSecretName; names are stable across
// restarts.
//
// Create the provider with New, which runs a cache of its own on the host, or with NewForHost,
// which reads through a cache you run, and hand it to the manager, which starts it; no
// SetupWithManager is needed. Options embeds kit.Options (mcr.dev/core/providers/kit), the
// fields every provider shares; the provider runs on that kit's engine and engage step. The
// command cmd/kubeconfig-secret (package enroll) writes a member's Secret.
//
// docs/providers/kubeconfig.md in the mcr repository is the full reference: credentials and
// rotation, adding a member, Events, metrics and troubleshooting, RBAC, options.
package kubeconfig
