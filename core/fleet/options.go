// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package fleet

import (
	"time"

	"github.com/go-logr/logr"

	"mcr.dev/core/redact"
)

const (
	// DefaultMaxConcurrency is the default of Options.MaxConcurrency.
	DefaultMaxConcurrency = 10
	// DefaultClusterTimeout is the default of Options.ClusterTimeout.
	DefaultClusterTimeout = 10 * time.Second
)

// How long an event handler waits before it tries a cluster again where it could not be added
// (the cluster does not serve the kind yet, its API server does not answer).
const (
	retryMinDelay = time.Second
	retryMaxDelay = time.Minute
)

// Options configure a Reader. The zero value of every field selects its default.
type Options struct {
	// MaxConcurrency bounds how many clusters a read works on at a time: a List of a fleet of
	// a thousand clusters costs at most this many concurrent cache reads (or requests, with
	// UseAPIReader), and AddEventHandler adds itself to at most this many clusters at a time.
	//
	// Defaults to DefaultMaxConcurrency (10).
	MaxConcurrency int

	// ClusterTimeout bounds each cluster's part of a read, from the moment the read starts on
	// that cluster: waiting for a new informer to sync, the reachability check, a request to
	// the API server. A cluster that has not answered by then is reported in the read's
	// PartialError (wrapping context.DeadlineExceeded) and the read goes on without it, also
	// when what it waits for does not heed its context.
	//
	// Defaults to DefaultClusterTimeout (10 seconds).
	ClusterTimeout time.Duration

	// UseAPIReader reads each cluster through its API reader (cluster.GetAPIReader) instead
	// of its cache: one request per cluster per read, always current, and an unreachable
	// cluster is reported at once. Field selectors are then evaluated by the API servers,
	// which know a few fields per kind (metadata.name, metadata.namespace, ...) and none of
	// the field indexes.
	//
	// Defaults to false: reads come from the clusters' caches, as controllers' reads do, and
	// may use field indexes added with the manager's GetFieldIndexer.
	UseAPIReader bool

	// CheckReachable makes every cache read of a cluster also ask its API server for one
	// object of the type (a List with limit 1, in the read's namespace, through the API
	// reader), so that a cluster whose API server went down after its cache synced is reported
	// instead of answered from a cache that no longer changes. It costs one small request per
	// cluster per read. Ignored with UseAPIReader.
	//
	// Defaults to false: a cluster whose cache has synced is read from it, reachable or not.
	CheckReachable bool

	// IncludeLocal makes the local (host) cluster take part, under mcmanager.LocalCluster,
	// once the manager runs and the local cache has synced, also when the manager does not
	// engage it. The local cluster takes part anyway when the manager engages it
	// (mcmanager.WithLocalClusterEngaged, or a manager without a provider).
	//
	// Defaults to false.
	IncludeLocal bool

	// Logger receives what the reader reports: clusters an event handler cannot be added to
	// yet, with the cluster under the key "cluster".
	//
	// Defaults to the manager's logger, named "fleet". Either is wrapped with
	// redact.Logger.
	Logger logr.Logger
}

// withDefaults is the only place defaults are applied; managerLog is the manager's logger.
func (o Options) withDefaults(managerLog logr.Logger) Options {
	if o.MaxConcurrency <= 0 {
		o.MaxConcurrency = DefaultMaxConcurrency
	}
	if o.ClusterTimeout <= 0 {
		o.ClusterTimeout = DefaultClusterTimeout
	}
	if o.Logger.GetSink() == nil {
		o.Logger = managerLog.WithName("fleet")
	}
	// Errors of unreachable clusters quote request URLs.
	o.Logger = redact.Logger(o.Logger)
	return o
}
