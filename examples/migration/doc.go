// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package migration checks the promise of docs/migration.md: a program written for
// sigs.k8s.io/multicluster-runtime v0.24.1 compiles against mcr after the import swap the guide
// documents, and nothing else.
//
// testdata holds such programs, written against multicluster-runtime's API and kept in its import
// paths: controllers (builder, handlers, sources, controller options, custom requests, the
// cluster in the context), providers (the utility providers and the sharded coordinator),
// setupprovider (an in-house provider set up with SetupWithManager), and one for each provider
// multicluster-runtime ships: kubeconfig, capi (Cluster API), clusterinventoryapi and file (with
// what its sync-local-to-remote example uses). The test compiles each as it
// is against multicluster-runtime (so the programs stay true to its API), then runs the guide's
// sed block, taken from docs/migration.md itself, over copies and compiles them against mcr's
// modules of this repository. Programs that use one of multicluster-runtime's provider modules
// the Go module proxy does not serve (file, kind, cluster-api, cluster-inventory-api), or its
// namespace provider (v0.24.1's does not compile against controller-runtime v0.25, which mcr
// requires), are compiled against mcr only. It has no code of its own.
package migration
