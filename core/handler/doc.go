// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package handler adapts controller-runtime event handlers to the fleet.
//
// A multi-cluster handler is a factory: the controller calls it once for every cluster it
// engages, with that cluster's name and object, and routes the cluster's events through the
// handler it returns. Handlers written for a single cluster are reused with Lift (the cluster is
// injected into every request); map functions choose their own target cluster with
// EnqueueRequestsFromClusterMapFunc (cross-cluster fan-out).
//
// The queue a lifted handler sees keeps the priority-queue capabilities of the controller's
// queue, so controller-runtime's handlers still give objects of the initial list a low priority.
package handler
