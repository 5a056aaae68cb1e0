// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package kind is a cluster provider that engages the clusters of the local kind installation
// (https://kind.sigs.k8s.io), for development and CI: every cluster `kind get clusters` lists,
// or those whose names start with Options.Prefix, polled through the kind library and the
// container engine. A cluster is named exactly as kind names it ("fleet-a", not the context
// "kind-fleet-a"), engaged again when it is deleted and created anew, and disengaged when it is
// gone. It needs no Kubernetes permissions anywhere.
//
// Create it with New and hand it to the manager, which starts it. Options embeds kit.Options,
// the fields every provider shares.
//
// See docs/providers/kind.md in the mcr repository: naming, readiness, credentials and
// re-creation, troubleshooting, options and testing without a container engine.
package kind
