// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package configmapprovider is a complete, small cluster provider written on mcr's provider
// helpers, meant as the starting point for writing your own: its fleet is one ConfigMap in the
// host cluster whose keys are cluster names and whose values are kubeconfigs.
//
//	apiVersion: v1
//	kind: ConfigMap
//	metadata:
//	  name: clusters            # Options.Name
//	  namespace: mcr-system     # Options.Namespace
//	data:
//	  east: |                   # the cluster "east"
//	    apiVersion: v1
//	    kind: Config
//	    ...
//
// A real provider would keep credentials in Secrets (see mcr.dev/providers/kubeconfig); a
// ConfigMap keeps the example short and shows that the source of truth can be anything.
//
// # What a provider has to do, and who does it here
//
//   - Get and IndexField of multicluster.Provider, Start of multicluster.ProviderRunnable, and
//     the lifecycle of each cluster (start, bounded cache sync, indexes, engage, disengage by
//     canceling its context): the embedded kit.Members (mcr.dev/core/providers/kit).
//   - The queue, parallel syncs, backoff, resync, the access check, re-engaging only when
//     credentials change, keeping a working member when its new kubeconfig is bad, and one way
//     of reporting (log, Events on the ConfigMap, metrics): the provider kit's Engine
//     (mcr.dev/core/providers/kit).
//   - Discovery, which is all that is written here: a kit.HostObjects source on a host cluster
//     whose cache holds only the ConfigMap (so the provider needs RBAC for nothing else), and a
//     sync that turns one key into a kit.Member, loading the kubeconfig under the hardened zero
//     kubeconfig.Policy, since whoever can edit the ConfigMap controls what the kubeconfigs say.
//
// conformance_test.go runs the mcr conformance suite (mcr.dev/conformance) against it.
package configmapprovider
