// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package kcptest runs a real kcp server for tests: the kcp binary that `make kcp` builds from
// the Go module proxy (github.com/kcp-dev/kcp, Version), started on free loopback ports with its
// embedded etcd and its virtual workspaces in-process, in a temporary root directory.
//
// Start (or StartForTest, or Main for a test package's TestMain) returns a Server once kcp is
// ready: its admin credentials reach every workspace (Server.Config, Server.Client), and helpers
// create what the kcp provider's tests need — workspaces (CreateWorkspace), APIResourceSchemas
// from CRDs (CreateSchema), APIExports (CreateExport), APIBindings that bind them in consumer
// workspaces (Bind) — and read the URLs of an APIExportEndpointSlice, the APIExport's virtual
// workspace on each shard (EndpointURLs). Every helper waits until kcp has acted on what it
// created (a workspace is Ready, a binding is Bound), so tests need no sleeps.
//
// kcp takes 30-50 seconds to start on a small machine and about 500 MB of memory: start one per
// test package (Main) and give each test workspaces of its own.
//
// The binary is found like the apiservers of mcr.dev/core/envtest: $MCR_KCP_BINARY if set,
// otherwise bin/kcp/<Version>/kcp in the nearest directory above the working directory that
// holds go.work (the repository root, where `make kcp` puts it). When it is missing, Start fails
// with ErrBinaryNotFound and the command that builds it.
package kcptest
