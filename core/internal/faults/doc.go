// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package faults holds the tests that prove what mcr promises when members fail while they are
// engaged: a member whose apiserver stops and comes back, members whose endpoint hangs,
// credentials rotated through writes the provider refuses, and a soak test that mixes member
// stops, rotations and removals under a running controller (MCR_SOAK_DURATION, `make soak`).
// They run the public API (manager, builder, a provider) against real kube-apiservers started
// by mcr.dev/core/envtest, count every object written during and after a fault, and report
// latencies and costs with t.Logf; docs/reliability.md quotes the figures. It has no code of its
// own.
package faults
