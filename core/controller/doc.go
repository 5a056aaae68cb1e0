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
package controller
