// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package kubeconfig is a cluster provider that engages one cluster for every kubeconfig Secret
// on a host cluster: the labeled Secrets of one namespace (or of all), each holding a member's
// kubeconfig, loaded under a hardened Policy. A cluster is named after its Secret, re-engaged
// when its credentials change and disengaged when the Secret is deleted or unlabeled.
//
// Create it with New (a host cache of its own) or NewForHost (a cache you run) and hand it to the
// manager, which starts it. Options embeds kit.Options, the fields every provider shares. The
// command cmd/kubeconfig-secret (package enroll) writes a member's Secret.
//
// See docs/providers/kubeconfig.md in the mcr repository: source of truth, naming, credentials
// and rotation, Events and troubleshooting, RBAC and options.
package kubeconfig
