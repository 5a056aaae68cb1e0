// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package milo is a cluster provider that engages the control plane of every ready project of
// Milo (go.miloapis.com/milo) as a cluster named after the project. It watches Projects on the
// Milo apiserver (ModeProject, the default) or ProjectControlPlanes on Milo's infrastructure
// cluster (ModeProjectControlPlane), and reaches every control plane with the host's own
// credentials and only the address changed; a project that turns unready keeps its cluster for
// Options.UnreadyGracePeriod. Milo publishes no Go module, so the two types are defined in the
// api/ packages of this module.
//
// Create it with New (a cache of its own on the host) or NewForHost (a cache you run) and hand
// it to the manager, which starts it. Options embeds kit.Options, the fields every provider
// shares.
//
// See docs/providers/milo.md in the mcr repository: modes and addresses, readiness and the grace
// period, credentials, Events and troubleshooting, RBAC and options.
package milo
