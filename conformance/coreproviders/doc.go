// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package coreproviders runs the conformance suite against the utility providers of
// mcr.dev/core (namespace, clusters, multi, single and nop) from this module's tests, so that
// core never depends on the suite. It has no code of its own besides its tests: the harnesses
// are in harness_test.go, the runs in coreproviders_test.go, the results in docs/conformance.md.
package coreproviders
