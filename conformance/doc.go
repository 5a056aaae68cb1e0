// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package conformance is the provider conformance suite of mcr: the tests every
// multicluster-runtime provider (mcr's own, or anyone's) runs against itself to show that it
// engages, indexes and disengages clusters as the contract in mcr.dev/core/multicluster
// requires.
//
// # Running it
//
// A provider author implements a Harness: a few small methods that create, update and delete a
// member in the provider's source of truth and say how to reach each member directly. For the
// common case of one kubeconfig per member, KubeconfigHarness needs only three functions, and
// Fleet backs members with real kube-apiservers from mcr.dev/core/envtest, or, built with
// NewFleetFromKubeconfigs, with existing clusters given as kubeconfig contexts (kind clusters,
// real ones), where it cleans up after itself. Then, in the provider module's
// conformance_test.go:
//
//	func TestConformance(t *testing.T) {
//		conformance.Run(t, harness, conformance.Options{
//			Features: []conformance.Feature{conformance.CredentialRotation},
//		})
//	}
//
// Run owns the Ginkgo suite of the test binary. A provider with a Ginkgo suite of its own calls
// RegisterSpecs inside it instead. The package registers no flags: the report file comes from
// Options.ReportPath or the MCR_CONFORMANCE_REPORT environment variable.
//
// # What it checks
//
// The suite starts the provider the way a manager does, Start(ctx, aware), with a probe as the
// Aware that records every Engage, its context and its cluster; in ModeManager it runs the
// provider under a real mcr.dev/core manager instead. Tests assert contract events (an Engage,
// a context that ends or stays alive, what Get returns, what an indexed List returns through
// the engaged cluster), so a failure names the broken rule. Tests returns the list; each test
// has a stable ID, a MUST statement and the Feature it needs. Core tests apply to every
// provider; the tests of an extended feature run when the provider claims the feature in
// Options.Features and are reported "notSupported" otherwise.
//
// Results are passed, failed (the provider broke the rule), errored (the harness or the
// environment failed, so the suite could not decide), skipped and notSupported. Each test's
// result is printed to Options.Output (standard output) as it ends; at the end a markdown
// summary goes there and to the test log, and a YAML Report can be written; Verify (and the
// command mcr.dev/conformance/cmd/verify) checks a report against the suite's list of tests.
//
// Every wait has a named timeout in Options.Timeouts, with defaults meant for a loaded 2-core
// machine running the race detector; no test asserts that anything is fast. A broken provider
// does not make every test wait them out: when Start returned early, the provider engages
// nothing, or an engage context ended on its own, the waits that depend on it fail at once with
// that root cause in their message, and once a core rule failed, the tests that need it are
// skipped naming it (unless Options.RunDependents). Timeouts.Run bounds the whole run (and it ends a minute
// before go test's -timeout), so that the summary and the report, marked incomplete, are written
// even then.
//
// The report records the suite's version and the provider's module (from the test binary's
// build information: "(devel)" with the git commit for a checkout) and the versions of mcr.dev/core, multicluster-runtime,
// controller-runtime and client-go: from the build information, or, where that lacks them (in a
// go.work workspace), from `go list -m` in the tested package's directory.
//
// This module depends on mcr.dev/core; core never depends on it. Its own tests run the suite
// against a reference provider, against deliberately broken providers (each must fail exactly
// the tests it should), against every utility provider in core and against
// multicluster-runtime's namespace provider.
package conformance

//go:generate go run ./internal/gendocs ../docs/conformance-tests.md
