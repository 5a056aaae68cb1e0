// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package coordinator holds the coordinators of manager.WithCoordinator, under the names
// multicluster-runtime gives them, so that programs written for it keep compiling after the
// import swap: basic engages every cluster on every replica (mcr's default), sharded shares the
// fleet among replicas with mcr's sharding (manager.WithSharding).
package coordinator
