// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package clusters provides a provider whose clusters are added and removed by code: tests, and
// custom wiring where the source of truth is a program rather than an API.
//
// Add before the manager starts the provider parks the cluster; Start engages every parked
// cluster. Add after Start engages the cluster at once and returns when it is engaged or has
// failed. Each cluster lives until Remove, until it fails on its own, or until Start's context
// ends; its lifetime never derives from the context passed to Add. Clusters are started by the
// provider and must not be started by anyone else.
//
// Writing a provider with a real source of truth? Embed mcr.dev/core/clusters.Clusters
// instead, as this provider does.
package clusters
