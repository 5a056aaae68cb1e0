// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package realkcp holds the kcp provider's tests against a real kcp server (package kcptest):
// consumer workspaces bind an APIExport, and the provider engages their logical clusters through
// the APIExport's real virtual workspace. It has no code of its own; its tests share one kcp,
// started by TestMain, so they live apart from the provider package's tests, which share a
// fleet of plain apiservers behind the front-proxy stand-in.
package realkcp
