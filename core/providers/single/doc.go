// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package single provides a provider that serves one cluster under one name.
//
// It puts a single cluster through the provider path of a multi-cluster manager, so that
// controllers see requests for the named cluster exactly as they would with a dynamic fleet:
// useful for tests, for migrating a single-cluster operator one step at a time, and for serving
// one remote cluster from a manager that runs elsewhere.
//
// Start starts the cluster (unless Options.AlreadyRunning says someone else runs it, for
// example because it was added to the manager), waits for its cache to sync, engages it with the
// manager and blocks; when Start's context ends the cluster is disengaged (and stopped if this
// provider started it). Get answers only for the configured name, and only while the cluster
// is engaged. IndexField applies to the cluster, also when called before Start.
package single
