// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package context carries the cluster of a request through a context.Context, so that
// single-cluster reconcilers can run in a multi-cluster controller unchanged: adapt them with
// ReconcilerWithClusterInContext and resolve the cluster inside with
// manager.Manager.ClusterFromContext.
package context
