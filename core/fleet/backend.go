// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package fleet

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
)

// Reader reads objects of every engaged cluster at once: List lists them (ListItems and
// ListByCluster with each object's cluster), AddEventHandler tells one handler about their
// changes. New returns one over the clusters a manager engages, each read through its own
// cache; a provider whose clusters share one cache returns one over its Backend (the kcp
// provider's Provider.Fleet), so that one API, one InClusters option and one Registration
// serve both. Its methods are safe for concurrent use.
type Reader struct {
	backend Backend
	// own is the backend of a Reader of New, which the manager engages; nil otherwise.
	own *clusterReader
}

var (
	_ mcmanager.Runnable = &Reader{}
	// Reads go on while another replica is leader: dashboards read from every replica.
	_ manager.LeaderElectionRunnable = &Reader{}
)

// Backend is what a Reader reads through. The Reader parses the options, applies Limit,
// refuses Continue, sorts the result (by cluster, namespace and name) and reports clusters that
// failed in a *PartialError; a Backend reads the clusters.
type Backend interface {
	// List reads the objects of list's type of every engaged cluster, or of those in only when
	// it is not nil, with o's namespace and label and field selectors (never a Limit or a
	// Continue token). It returns an entry in Listed.Objects for every cluster read, with or
	// without objects, and one in Listed.Failed for every cluster that could not be read (its
	// error with URLs redacted); the objects are the Reader's to keep. An error of its own
	// fails the whole list.
	List(ctx context.Context, list client.ObjectList, o *client.ListOptions, only map[multicluster.ClusterName]bool) (Listed, error)
	// AddEventHandler tells handler about the objects of obj's type of every engaged cluster,
	// present and future, as Reader.AddEventHandler says, until the Subscription is removed.
	// obj and handler are never nil: the Reader refuses those.
	// When some clusters cannot be followed yet it returns the Subscription with a
	// *PartialError naming them.
	AddEventHandler(ctx context.Context, obj client.Object, handler Handler) (Subscription, error)
}

// Listed is what Backend.List read: the objects of each cluster read, and why each of the
// others could not be.
type Listed struct {
	Objects map[multicluster.ClusterName][]client.Object
	Failed  map[multicluster.ClusterName]error
}

// Subscription is a Backend's handler added with Backend.AddEventHandler; Registration wraps
// it.
type Subscription interface {
	// Remove stops the handler's calls; once it has returned no call starts, and it waits
	// for a call in progress. Removing twice does nothing.
	Remove()
	// HasSynced reports whether the handler has been told about every object of the
	// clusters it follows so far.
	HasSynced() bool
}

// NewWithBackend returns a Reader that reads through backend. The Reader is not added to a
// manager: the backend follows its clusters itself.
func NewWithBackend(backend Backend) *Reader {
	return &Reader{backend: backend}
}

// Engage makes cl part of a Reader of New under name until ctx ends, in place of an earlier
// engagement of name; engaging the same cluster again while it is engaged changes nothing. The
// manager calls it for every cluster it engages. It returns at once and fails only for a nil
// cluster (adding event handlers to the cluster happens on goroutines of their own, so that a
// slow cluster never holds up its engagement), and for a Reader of NewWithBackend, whose
// backend follows its clusters itself.
func (r *Reader) Engage(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster) error {
	if r.own == nil {
		return fmt.Errorf("fleet: engaging cluster %q: this reader reads through its backend, which follows its own clusters", name)
	}
	return r.own.Engage(ctx, name, cl)
}

// Start engages the local cluster in a Reader of New when Options.IncludeLocal asks for it,
// and waits until ctx ends. The manager calls it.
func (r *Reader) Start(ctx context.Context) error {
	if r.own == nil {
		<-ctx.Done()
		return nil
	}
	return r.own.Start(ctx)
}

// NeedLeaderElection returns false: the reader serves every replica.
func (r *Reader) NeedLeaderElection() bool { return false }
