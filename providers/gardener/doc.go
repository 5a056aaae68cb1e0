// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package gardener is a cluster provider for Gardener (gardener.cloud) landscapes: it engages one
// cluster per shoot, from either of Gardener's two places to run a controller (Options.Topology).
// TopologyGarden (the default) watches the Shoots on the garden cluster and reaches every usable
// one with short-lived admin credentials from its adminkubeconfig subresource, renewed before
// they expire; clusters are named "<project namespace>/<shoot>" (ShootClusterName).
// TopologySeed watches the extensions Cluster objects of a seed and reaches each shoot control
// plane with the kubeconfig in the Secret "gardener" of its namespace; clusters are named after
// the shoot's technical ID (SeedClusterName).
//
// Create it with New (a cache of its own on the garden or seed) or NewForHost (a cluster you
// run) and hand it to the manager, which starts it. Options embeds kit.Options, the fields every
// provider shares.
//
// See docs/providers/gardener.md in the mcr repository: topologies, usable shoots, credentials
// and renewal, Events and troubleshooting, RBAC and options.
package gardener
