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
// Sharing is the default: every member cluster that a provider built on the provider kit
// creates takes its mapper from Default's Pool, which shares per endpoint among clusters that
// authenticate with tokens and keeps different client certificates apart. Set
// clusters.Defaults.RESTMappers (mcr.dev/core/manager.WithClusterDefaults) to use a Pool of
// your own, clusters.Defaults.OwnRESTMappers to give every member a mapper of its own as
// controller-runtime does, or pass Own in one provider's ClusterOptions to opt that provider
// out. Sharing is correct when the endpoint serves the same APIs to every credential that
// reaches it: a kube-apiserver, an aggregated or front-proxy path such as kcp's
// /clusters/<name> (the path is part of the endpoint). Opt out behind a proxy that picks the
// backend cluster from the client's token at one URL: those clusters would see one another's
// kinds. Clusters a program builds itself with cluster.New (for the clusters provider, say)
// share only when given a Pool's ClusterOption.
//
// What makes two clusters' endpoints the same, and which configs never share, is documented on
// Pool.MapperProvider.
package restmapper
