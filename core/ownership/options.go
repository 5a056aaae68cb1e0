// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package ownership

import (
	"errors"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/multicluster"
)

// Defaults of Options, applied by NewTracker.
const (
	DefaultFinalizer             = "ownership.mcr.dev/projections"
	DefaultMaxConcurrentClusters = 8
	DefaultClusterTimeout        = 10 * time.Second
	DefaultRecheckInterval       = 30 * time.Second
	DefaultEventSource           = "mcr.dev/ownership"
	DefaultSweepInterval         = 5 * time.Minute
	DefaultSweepDeletesPerSecond = 5
)

// Options configures a Tracker and its Sweeper. Zero fields take the documented defaults.
type Options struct {
	// Projections are the kinds of the projections, as list types (&corev1.ConfigMapList{}, an
	// unstructured.UnstructuredList with its kind set): Finalize and the Sweeper list these
	// kinds. Required. A cluster that does not serve a kind has no projections of it.
	Projections []client.ObjectList

	// ExtraClusters are clusters that hold projections but that the manager does not engage,
	// by the name Track records them under (a downstream cluster added with mgr.Add, say).
	// Finalize and the Sweeper treat them as engaged clusters, always there. Their names must
	// not be names of engaged clusters. Default none.
	ExtraClusters map[multicluster.ClusterName]cluster.Cluster

	// Finalizer is the finalizer Track adds to owners. Default DefaultFinalizer.
	Finalizer string
	// MaxConcurrentClusters bounds how many clusters Finalize and a sweep work on at once.
	// Default DefaultMaxConcurrentClusters.
	MaxConcurrentClusters int
	// ClusterTimeout bounds the work on one cluster, so an unreachable cluster fails alone.
	// Default DefaultClusterTimeout.
	ClusterTimeout time.Duration
	// RecheckInterval is how soon Finalize wants to run again while it waits for a cluster
	// that is not engaged (it also runs when that cluster's projections send events once it is
	// engaged again, if the controller watches them with EnqueueOwner). Default
	// DefaultRecheckInterval.
	RecheckInterval time.Duration
	// GiveUpAfter is the give-up policy of Finalize: a recorded cluster that has not been
	// engaged for longer than this is given up, and the owner's finalizer no longer waits for
	// it; the owner gets a Warning Event (reason ReasonAbandoned) and the annotation
	// AnnotationAbandoned, and the projections left there are orphans for a Sweeper once the
	// cluster is engaged again. Zero, the default, never gives up: the finalizer stays until
	// every recorded cluster is engaged and clean.
	//
	// "Not engaged" is what this replica sees: in a sharded deployment (mcr.dev/core/sharding)
	// a replica engages only its own clusters, so leave GiveUpAfter at zero there, or set it
	// well above the longest time a cluster may wait for its shard to be taken over.
	GiveUpAfter time.Duration
	// EventSource is the reporting controller of the Events on owners. Default
	// DefaultEventSource.
	EventSource string

	// SweepInterval is the time between two sweeps of a Sweeper; the first one starts at once.
	// Default DefaultSweepInterval.
	SweepInterval time.Duration
	// SweepDeletesPerSecond limits the deletes of a Sweeper (burst 1). Default
	// DefaultSweepDeletesPerSecond.
	SweepDeletesPerSecond float64
	// DryRun makes a Sweeper only report orphans (log, metrics, SweepReport), not delete them.
	DryRun bool
}

// withDefaults returns o with every zero field set to its default.
func (o Options) withDefaults() (Options, error) {
	if len(o.Projections) == 0 {
		return o, errors.New("ownership: Options.Projections names no kind")
	}
	if o.Finalizer == "" {
		o.Finalizer = DefaultFinalizer
	}
	if o.MaxConcurrentClusters <= 0 {
		o.MaxConcurrentClusters = DefaultMaxConcurrentClusters
	}
	if o.ClusterTimeout <= 0 {
		o.ClusterTimeout = DefaultClusterTimeout
	}
	if o.RecheckInterval <= 0 {
		o.RecheckInterval = DefaultRecheckInterval
	}
	if o.EventSource == "" {
		o.EventSource = DefaultEventSource
	}
	if o.SweepInterval <= 0 {
		o.SweepInterval = DefaultSweepInterval
	}
	if o.SweepDeletesPerSecond <= 0 {
		o.SweepDeletesPerSecond = DefaultSweepDeletesPerSecond
	}
	return o, nil
}
