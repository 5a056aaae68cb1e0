// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package kubeconfigstrategy holds multicluster-runtime v0.24.1's options for how its
// cluster-inventory-api provider obtains a member's credentials, for the compatibility package
// mcr.dev/providers/clusterprofile/compat/clusterinventoryapi. It is where the sed of
// docs/migration.md maps sigs.k8s.io/multicluster-runtime/providers/cluster-inventory-api/kubeconfigstrategy.
//
// Option picks exactly one strategy, as upstream requires:
//
//   - AccessProviderOption (Option.AccessProvider; v0.24.1's names CredentialsProviderOption and
//     Option.CredentialsProvider are kept as deprecated aliases, as on upstream's main branch):
//     the operator's KEP-5339 access providers (an *access.Config of
//     sigs.k8s.io/cluster-inventory-api/pkg/access, e.g. from access.NewFromFile). It becomes
//     Options.AccessProviders of mcr.dev/providers/clusterprofile.
//   - SecretStrategyOption: the kubeconfig in the "Config" key of the Secret in the profile's
//     namespace labeled with the consumer and profile names. It becomes Options.Secret of
//     mcr.dev/providers/clusterprofile, with the same labels and key.
//
// This package has only the option types and the Secret labels. Upstream's Interface,
// CustomWatch and New are the internals of its reconciler: the provider's Options take an
// Option, never an Interface, so no program can hand the provider a strategy of its own, and
// they are not provided here. mcr's provider implements both strategies itself.
package kubeconfigstrategy
