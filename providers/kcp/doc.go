// Package kcp is a cluster provider that engages the logical clusters of a kcp virtual
// workspace, typically every workspace that binds an APIExport, as clusters of a multi-cluster
// manager: each logical cluster gets a client scoped to it and a cache that reads from one cache
// shared by all logical clusters of the same shard.
//
// # What it watches
//
// In the kcp workspace the config given to New points at (<kcp>/clusters/<workspace path>), the
// APIExportEndpointSlice (apis.kcp.io/v1alpha1) of the given name; kcp creates one named after
// each APIExport and lists in its status.endpoints the URL of the APIExport's virtual workspace
// on every shard. For each endpoint URL the provider runs one wildcard cache on
// <url>/clusters/*, with kcp's cluster-aware informers, and watches there the objects of
// Options.ObjectToWatch (APIBindings by default): the logical clusters they live in are the
// fleet. Endpoints that appear in the slice are watched, endpoints that disappear are stopped
// (their logical clusters disengaged first, then their caches stopped), and a deleted slice
// stops all. No SetupWithManager is needed: the manager runs the provider.
//
// # Cluster names
//
// A logical cluster is engaged under its logical cluster name, the kcp.io/cluster annotation
// of its objects (e.g. "2x8ic9u5lnb0d6ub", the spec.cluster of its Workspace), as in kcp-dev's
// multicluster-provider. Names are stable and unique within kcp. The workspace path of a logical
// cluster (e.g. "root:org:team"), taken from the kcp.io/path annotation of its objects when they
// carry it, leads to its cluster through Provider.GetByPath and Provider.ClusterNameForPath.
//
// # Engaged clusters
//
// An engaged cluster's client writes to <url>/clusters/<name> and reads from its cache; its API
// reader reads live from <url>/clusters/<name>. Its cache is a view of the endpoint's wildcard
// cache that shows, indexes and notifies the objects of its own logical cluster only; an
// informer asked for through it is created on the wildcard cache once per endpoint and shared by
// all the endpoint's logical clusters. Field indexes (IndexField) are added to the shared
// informer once per endpoint, keyed by logical cluster, so that an indexed List on one logical
// cluster returns its objects only. When a logical cluster is disengaged, every event handler
// added through its cache is removed from the shared informers.
//
// # Readiness
//
// A logical cluster is engaged while at least one of its watched objects is ready
// (Options.IsReady: by default an APIBinding whose condition Ready is True), and disengaged
// when none is ready any more or its last object is deleted. Changes of its objects that leave
// it ready re-engage nothing.
//
// # Credentials
//
// The config given to New is used for the slice's workspace and, with the host replaced, for
// every virtual workspace endpoint: in kcp the provider's identity reaches the logical clusters
// of an APIExport through the virtual workspace, authorized by its access to the APIExport's
// content. Logical clusters have no credentials of their own, so none are rotated (refresh the
// provider's own token with a BearerTokenFile or an exec plugin in that config).
//
// # Failures
//
// The provider runs on the provider kit (mcr.dev/core/providers/kit): endpoints and logical
// clusters are keys of one engine, synced in parallel, retried with backoff between
// Options.RetryMinDelay and Options.RetryMaxDelay and resynced every Options.ResyncPeriod, so one
// broken endpoint or cluster never holds up the others. An endpoint that cannot be watched
// (unreachable, not serving the watched type, access refused, not synced within
// Options.CacheSyncTimeout) is reported: an error log line with the key "endpoint", a Warning
// Event EndpointUnavailable on the slice, and the metrics mcr_kcp_provider_errors_total and
// mcr_kcp_provider_broken_endpoints. A logical cluster that cannot be engaged is logged with the
// key "cluster" and counted in mcr_kcp_provider_errors_total and
// mcr_kcp_provider_broken_logical_clusters; an object without a valid kcp.io/cluster annotation
// is logged and ignored.
//
// docs/providers/kcp.md is the provider's reference: permissions in kcp, options, failures.
package kcp
