// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package integration holds the tests that prove the behavior of the manager, builder,
// controller and sources together, against a fleet of real kube-apiservers started by
// mcr.dev/core/envtest. It has no code of its own.
package integration
