// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package single provides a provider that serves one cluster under one name through the
// provider path of a multi-cluster manager, so that controllers see requests for it exactly as
// they would with a dynamic fleet: useful for tests, for migrating a single-cluster operator one
// step at a time, and for serving one remote cluster from a manager that runs elsewhere. Start
// starts the cluster (unless Options.AlreadyRunning), engages it once its cache has synced, and
// disengages it when its context ends.
//
// See docs/providers/single.md in the mcr repository.
package single
