// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package controller provides multi-cluster controllers: one controller-runtime controller (one
// queue, one pool of workers, controller-runtime's metrics and logging) fed by every cluster the
// controller is engaged with.
//
// Engaging a cluster never blocks: the controller records the cluster and starts its sources in
// the background, each bounded by the controller's CacheSyncTimeout, so a slow or unreachable
// cluster never delays the others. Everything started for a cluster is bound to the cluster's
// engage context: when the provider cancels it, the cluster's event handlers are removed and its
// bookkeeping is released, leaving no goroutine behind.
//
// A member that stops answering while engaged stays engaged: its sources keep their handlers,
// the other clusters are served as before, and its requests are retried as any failing request
// is. When it answers
// again, the Kind sources restart its informers at once instead of waiting for client-go's
// watch backoff (up to a minute), so the member is reconciling again within seconds and
// nothing written to it meanwhile is lost (see package source, "Members that come back"). The
// controller hands each source a context carrying its logger, with the cluster, for these
// messages.
//
// # Logs
//
// A reconcile's logger (in its context, logr.FromContextOrDiscard) carries controller-runtime's
// keys, so that log queries and dashboards written for controller-runtime keep working, plus
// "cluster": "controller", "namespace", "name", "reconcileID", and the object under "object"
// as controller-runtime's controller.New logs it. A controller built with the builder's For (or
// WithForKind) logs as controller-runtime's builder does instead: "controllerGroup" and
// "controllerKind" on every line, and the object under its kind, for example
// "ConfigMap": {"name": "x", "namespace": "y"}. controller-runtime's builder logs no object key
// for a controller without For; mcr's keeps "object" there.
//
// # Kinds a cluster does not serve
//
// A controller may watch a kind (a CRD) that only some members serve, or that a member starts
// serving later. In a member that does not serve it, the source's start fails with a "no
// matches for kind" error; the controller does not retry that as an error: it parks the source
// there, says so once (a log line with the cluster, the mcr_parked_sources gauge, the source's
// "parked" reason on the fleet debug endpoint), counts it as synced for readiness, and tries
// again with a slow backoff bounded by WithParkedRetryMax. Once the member serves the kind (its CRD
// installed), the source starts like any other and its objects are reconciled. Field indexes
// follow the same rule in the providers (see mcr.dev/core/clusters, Clusters.IndexField).
//
// A kind a member stops serving while it is watched (its CRD deleted) is noticed by asking the
// member's discovery at the same pace (kinds of the built-in API groups are never asked about):
// the source stops, the kind's informer is removed from the member's cache, and the source is
// parked and resumed as above.
package controller
