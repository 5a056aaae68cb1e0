// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package compat helps a provider offer multicluster-runtime's API, which builds the provider
// after the manager that runs it (New(opts), then SetupWithManager(mgr)): a Deferred is handed
// to the manager at once and serves the provider once it is set up. The compat packages of
// mcr's providers (mcr.dev/providers/clusterapi/compat/capi, ...) embed one.
package compat
