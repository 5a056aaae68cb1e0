// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package providertest helps provider authors test a provider directly, without a manager: a
// Recorder stands in for the manager as the provider's Aware and remembers every engagement, and
// Start runs the provider until the test ends and checks that it shuts down.
//
// The conformance suite (mcr.dev/conformance) is the full, black-box check of a provider; this
// package is for the provider's own white-box tests (naming, readiness, credentials, events), where a
// test wants to look at what was engaged and when.
//
// The suites every provider repeats are drivers here, each taking a small struct of the
// provider's own hooks: RunKubeconfigLeakTest (with MarkedMembers and LeakCheck.Report) for
// credential hygiene, RunPermissionTests (with Trial and MemberPermissionSteps) for RBAC
// minimality, RunRestartTest for a host outage, StartUpstreamProgram (with CheckNotSetUp) for a
// drop-in of a multicluster-runtime provider. Main is the TestMain they share: one fleet of
// apiservers per package, and the process-wide logs in ProcessLogs for the leak checks.
//
// Waits poll every 25 ms up to a timeout the caller passes; they fail the test with what was seen
// last, so that a failure explains itself.
package providertest
