// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package ownership lets an object in one cluster of the fleet own objects in others.
//
// Kubernetes' owner references and garbage collector stop at the cluster boundary, so a
// controller that projects a hub object into members (a ConfigMap copied to every member, a
// Database run downstream) has to watch, clean up and garbage-collect its projections itself.
// This package does the three parts:
//
//   - Marking. SetOwner marks a projection with its owner: labels (the owner's UID, and its
//     cluster, hashed when the name is not a valid label value) so that projections are listed
//     by label selector, and the annotation AnnotationOwner with the full reference (cluster,
//     group, kind, namespace, name, UID). GetOwner reads it back and reports a marking that is
//     malformed or inconsistent as ErrBadMarking. SetOwner never re-marks an object another
//     owner (another UID) holds: a new owner of the same name does not adopt the old one's
//     projections.
//   - Watching. EnqueueOwner is a handler for the builder's Watches: an event of a marked
//     object in any engaged cluster enqueues its owner's request, in the owner's cluster
//     (the local cluster, LocalCluster, or any member).
//   - Clean-up. A Tracker adds a finalizer to the owner and records on it (AnnotationClusters)
//     the clusters that hold its projections (Track). When the owner is deleted, Finalize
//     deletes its projections (by the UID label, of the kinds in Options.Projections) in every
//     engaged cluster, with bounded concurrency and an error per cluster, and releases the
//     finalizer only when every recorded cluster is clean. A recorded cluster that is not
//     engaged keeps the finalizer until it is engaged again, unless Options.GiveUpAfter is set
//     and it stayed away longer: then it is given up, visibly (a Warning Event on the owner
//     and the annotation AnnotationAbandoned).
//   - Orphans. A Sweeper (opt-in, a manager Runnable) lists marked objects in the engaged
//     clusters, and deletes those whose owner does not exist or has another UID, rate-limited,
//     counted in Prometheus metrics, or only reports them with Options.DryRun.
//
// Projections may also live in clusters the manager does not engage (a downstream cluster
// added with mgr.Add): name them in Options.ExtraClusters, and watch them with MapToOwner.
//
// The owner's cluster is read through the manager (GetCluster), and the members' API servers
// directly (their API readers), so a projection written a moment ago is never missed.
package ownership
