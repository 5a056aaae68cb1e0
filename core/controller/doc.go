// Package controller provides multi-cluster controllers: one controller-runtime controller (one
// queue, one pool of workers, controller-runtime's metrics and logging) fed by every cluster the
// controller is engaged with.
//
// Engaging a cluster never blocks: the controller records the cluster and starts its sources in
// the background, each bounded by the controller's CacheSyncTimeout, so a slow or unreachable
// cluster never delays the others. Everything started for a cluster is bound to the cluster's
// engage context: when the provider cancels it, the cluster's event handlers are removed and its
// bookkeeping is released, leaving no goroutine behind.
package controller
