// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package kubeconfig is multicluster-runtime v0.24.1's kubeconfig provider API on mcr's
// kubeconfig provider (mcr.dev/providers/kubeconfig). It is the import path the sed of
// docs/migration.md maps sigs.k8s.io/multicluster-runtime/providers/kubeconfig to, so that a
// program written for that provider compiles unchanged and behaves as its documentation says:
// New(Options) before the manager, SetupWithManager(ctx, mgr) after it, Secrets labeled
// DefaultKubeconfigSecretLabel=true in Options.Namespace, clusters named after their Secrets.
//
// Underneath runs mcr's provider, with its own differences: its host cache holds only the
// selected Secrets (so it needs RBAC for nothing else and the manager's cache may exclude
// Secrets), a member's access is checked before it is engaged, a member whose new credentials
// are unusable keeps the ones that work, and kubeconfigs load under mcr's default
// kubeconfig.Policy, which refuses exec plugins, auth providers and local files. New programs
// should use mcr.dev/providers/kubeconfig, whose Options reach all of that.
package kubeconfig
