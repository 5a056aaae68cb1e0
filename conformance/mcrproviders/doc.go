// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package mcrproviders holds the conformance glue the providers of mcr.dev/providers share:
// the Options that name one of them in a report and claim its features, and the pieces their
// KubeconfigHarnesses share (a host behind a forwarder, its Outage, the Reports). It is for the
// providers' own tests; a provider maintained elsewhere fills conformance.Options itself.
package mcrproviders
