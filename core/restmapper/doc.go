// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package restmapper lets the clusters of a fleet that are served by one apiserver endpoint
// share one REST mapper.
//
// controller-runtime gives every cluster.Cluster a REST mapper of its own, which discovers and
// keeps the API groups of its server. With many clusters behind few endpoints (namespaces or
// tenants of one apiserver, each with its own credentials; members reached through one
// front-proxy path) those mappers hold the same discovery documents many times over: about
// 70 % of what an engaged cluster costs in heap (docs/benchmarks.md, "Scale"). A Pool keeps
// one mapper per endpoint instead. Its clusters keep their own credentials, clients, caches and
// connections; only the mapping of kinds to resources is shared.
//
// Sharing is opt-in: set clusters.Defaults.RESTMappers (mcr.dev/core/manager.WithClusterDefaults)
// for every cluster of a manager, or pass Pool.ClusterOption in one provider's
// ClusterOptions. It is correct when the endpoint serves the same APIs to every credential that
// reaches it: a kube-apiserver, an aggregated or front-proxy path such as kcp's
// /clusters/<name> (the path is part of the endpoint). Do not share behind a proxy that picks
// the backend cluster from the client's identity (a client certificate or token routed to
// different clusters at one URL): those clusters would see one another's kinds.
//
// What makes two clusters' endpoints the same, and which configs never share, is documented on
// Pool.MapperProvider.
package restmapper
