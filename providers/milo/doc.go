// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package milo is a cluster provider that engages the control plane of every ready project of
// Milo (go.miloapis.com/milo) as a cluster, and keeps the fleet in step while projects are
// provisioned, become unready and are deleted.
//
// It watches one cluster-scoped type on the host, after Options.Mode: Projects on the Milo
// apiserver (ModeProject, the default), whose control planes it reaches through the Milo
// apiserver's project paths, or ProjectControlPlanes on Milo's infrastructure cluster
// (ModeProjectControlPlane), whose control planes it reaches at their in-cluster Services. Every
// project's config is Options.BaseConfig (by default the host config) with only the Host
// replaced: the provider presents its own credentials to every control plane. A selected project
// is engaged once Options.IsReady says so, kept for Options.UnreadyGracePeriod when it stops being
// ready, and disengaged when its object is deleted.
//
// A cluster is named after its project (ClusterName, ProjectName), the name of both objects;
// names are stable across restarts. Milo publishes no Go module, so the two types are defined in
// the api/ packages of this module.
//
// Create the provider with New, which runs a cache of its own on the host, or with NewForHost,
// which reads through a cache you run, and hand it to the manager, which starts it; no
// SetupWithManager is needed. Options embeds kit.Options (mcr.dev/core/providers/kit), the
// fields every provider shares; the provider runs on that kit's engine and engage step.
//
// docs/providers/milo.md in the mcr repository is the full reference: modes and addresses,
// readiness and the grace period, credentials, Events, metrics and troubleshooting, RBAC, options.
package milo
