// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package nop provides a provider with no clusters. It runs a multi-cluster manager in provider
// mode with an empty fleet: useful for tests, and for binaries whose real provider is chosen at
// run time and may be none. Start blocks until its context ends, Get reports every name as not
// found, and IndexField does nothing.
//
// See docs/providers/nop.md in the mcr repository.
package nop
