// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package clusters provides a provider whose clusters are added and removed by code (Add,
// AddOrReplace, Remove): tests, and custom wiring where the source of truth is a program rather
// than an API. A cluster added before Start is engaged when the manager starts the provider; one
// added after is engaged at once. Writing a provider with a real source of truth? Build it on
// the provider kit, mcr.dev/core/providers/kit.
//
// See docs/providers/clusters.md in the mcr repository.
package clusters
