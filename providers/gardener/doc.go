// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package gardener is a cluster provider for Gardener (gardener.cloud) landscapes: it engages one
// cluster per shoot, from either of Gardener's two places to run a controller (Options.Topology).
//
// TopologyGarden (the default) watches, on the garden cluster, the Shoots of Options.Namespaces
// and engages every usable one with short-lived admin credentials that it requests from the
// Shoot's adminkubeconfig subresource and renews before they expire. TopologySeed watches, on a
// seed cluster, the extensions Cluster objects, one per shoot control plane the seed hosts, and
// engages each with the kubeconfig in the Secret "gardener" of its control-plane namespace,
// following the token renewals in it. A selected Shoot is engaged while Options.IsUsable says so
// (by default ShootUsable in the garden, ShootAwake in the seed) and disengaged at once when it
// stops being usable or selected, or is deleted.
//
// A cluster is named "<project namespace>/<shoot>" in the garden (ShootClusterName) and after the
// Cluster object, the shoot's technical ID, in the seed (SeedClusterName); ClusterKey maps a name
// back. Names are stable across restarts.
//
// Create the provider with New, which runs a cache of its own on the garden or seed, or with
// NewForHost, which reads through a cluster you run, and hand it to the manager, which starts it;
// no SetupWithManager is needed. Options embeds kit.Options (mcr.dev/core/providers/kit), the
// fields every provider shares; the provider runs on that kit's engine and engage step.
//
// docs/providers/gardener.md in the mcr repository is the full reference: topologies, usable
// shoots, credentials and renewal, Events, metrics and troubleshooting, RBAC, options.
package gardener
