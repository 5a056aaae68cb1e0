// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package credswap gives a member's rest.Config credentials that can be replaced in place.
//
// Config returns a copy of a config whose transport reads the bearer token, basic auth or
// client certificate from a Holder at each request and TLS handshake. Holder.Swap replaces
// them with those of a newer config of the same endpoint (same server, CA, TLS and proxy
// settings, impersonation): the clients, caches and watches built from the copy keep running,
// and every request sent after Swap returns carries the new credentials, so the old ones can be
// revoked at once. Connections opened with a replaced client certificate are closed, because
// TLS authenticates a connection once; watches on them resume from their resource version.
//
// Exec plugins are not handled here (core/internal/execplugin refreshes their credentials in
// place already), nor auth-provider plugins or a caller's own Transport: Config refuses those
// with ErrNotSwappable, and the caller builds the cluster as before.
package credswap
