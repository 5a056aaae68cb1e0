// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package realgarden holds the Gardener provider's tests against a real Gardener API: a
// gardener-apiserver (package internal/gardentest, built by `make gardener-apiserver`) aggregated
// into a garden kube-apiserver, with Shoots created through it and admin credentials issued by
// its adminkubeconfig subresource for kube-apiservers that play the shoots. It has no code of
// its own; its tests share one garden, started by TestMain, so they live apart from the provider
// package's tests, which use the front-proxy stand-in for what one real garden cannot show.
//
// Without the binary the tests skip, with the command that builds it, unless
// $MCR_REQUIRE_GARDENER is set (as CI does): then they fail.
package realgarden
