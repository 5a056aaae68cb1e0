// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package scale holds the benchmarks that measure what mcr costs as the fleet grows (up to
// 1,000 engaged clusters in one process) and what it costs on a single cluster next to plain
// controller-runtime and multicluster-runtime. It runs against real kube-apiservers started by
// mcr.dev/core/envtest, lazily, so that `go test` of the package without -bench stays cheap. It
// has no code of its own; `make bench-scale` runs it and docs/benchmarks.md reports it.
package scale
