// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package ownership

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/flowcontrol"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"mcr.dev/core/multicluster"
)

// Sweeper finds and deletes orphans: projections, in the engaged clusters, whose owner does
// not exist or has another UID (it was deleted while their cluster was away, a controller
// stopped between writing a projection and recording it, a finalizer gave up). It is opt-in:
// add it to the manager with mgr.Add. It runs on the leader only, a sweep every
// Options.SweepInterval.
//
// A projection is left alone whenever its owner cannot be looked up (the owner's cluster is
// not engaged, its kind is not served, an error): only an owner the API server reports absent,
// or present with another UID, makes an orphan.
type Sweeper struct {
	t       *Tracker
	kinds   map[schema.GroupKind]bool
	limiter flowcontrol.RateLimiter
}

// Orphan is a projection a sweep found without its owner.
type Orphan struct {
	Cluster multicluster.ClusterName
	Kind    schema.GroupKind
	Key     client.ObjectKey
	Owner   Owner
}

// SweepReport is the outcome of one sweep.
type SweepReport struct {
	// Orphans found, deleted unless DryRun.
	Orphans []Orphan
	// Deleted is how many orphans were deleted.
	Deleted int
}

// Sweeper returns a Sweeper of the projections whose owners are of the given kinds; marked
// objects with owners of other kinds belong to other controllers and are left alone.
func (t *Tracker) Sweeper(ownerKinds ...schema.GroupKind) *Sweeper {
	kinds := make(map[schema.GroupKind]bool, len(ownerKinds))
	for _, gk := range ownerKinds {
		kinds[gk] = true
	}
	return &Sweeper{
		t:       t,
		kinds:   kinds,
		limiter: flowcontrol.NewTokenBucketRateLimiter(float32(t.opts.SweepDeletesPerSecond), 1),
	}
}

// NeedLeaderElection makes the Sweeper run on the leader only.
func (s *Sweeper) NeedLeaderElection() bool { return true }

// Start sweeps at once and then every Options.SweepInterval until ctx ends.
func (s *Sweeper) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName("ownership-sweeper")
	ctx = log.IntoContext(ctx, logger)
	ticker := time.NewTicker(s.t.opts.SweepInterval)
	defer ticker.Stop()
	for {
		if _, err := s.Sweep(ctx); err != nil && ctx.Err() == nil {
			logger.Error(err, "Orphan sweep incomplete; the next one retries")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// Sweep runs one sweep over the engaged clusters and Options.ExtraClusters. Errors name their cluster; a failing
// cluster does not stop the others.
func (s *Sweeper) Sweep(ctx context.Context) (SweepReport, error) {
	sweeps.Inc()
	var (
		mu     sync.Mutex
		report SweepReport
		owners = &ownerLookup{t: s.t, known: map[Owner]ownerState{}}
	)
	results := s.t.forEachCluster(ctx, s.t.clusters(), func(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster) error {
		found, deleted, err := s.sweepCluster(ctx, name, cl, owners)
		mu.Lock()
		report.Orphans = append(report.Orphans, found...)
		report.Deleted += deleted
		mu.Unlock()
		return err
	})
	var errs []error
	for name, err := range results {
		if err != nil {
			sweepErrors.WithLabelValues(string(name)).Inc()
			errs = append(errs, fmt.Errorf("cluster %q: %w", name, err))
		}
	}
	return report, errors.Join(errs...)
}

func (s *Sweeper) sweepCluster(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster, owners *ownerLookup) ([]Orphan, int, error) {
	logger := log.FromContext(ctx).WithValues("cluster", name)
	var (
		found   []Orphan
		deleted int
		errs    []error
	)
	for _, proto := range s.t.opts.Projections {
		items, err := listProjections(ctx, cl, proto, client.HasLabels{LabelOwnerUID})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, obj := range items {
			owner, err := GetOwner(obj)
			if err != nil || !s.kinds[owner.GroupKind()] || !obj.GetDeletionTimestamp().IsZero() {
				continue // another controller's, or not ours to judge
			}
			orphan, err := owners.orphaned(ctx, owner)
			if err != nil {
				logger.V(1).Info("Cannot look up the owner of a projection; leaving it", "owner", owner.String(), "error", err.Error())
				continue
			}
			if !orphan {
				continue
			}
			gvk, err := apiutil.GVKForObject(obj, cl.GetScheme())
			if err != nil {
				errs = append(errs, err)
				continue
			}
			o := Orphan{Cluster: name, Kind: gvk.GroupKind(), Key: client.ObjectKeyFromObject(obj), Owner: owner}
			found = append(found, o)
			if s.t.opts.DryRun {
				orphans.WithLabelValues(string(name), o.Kind.String(), ActionReported).Inc()
				logger.Info("Found an orphan (dry run: not deleting it)", "kind", o.Kind.String(), "object", o.Key.String(), "owner", owner.String())
				continue
			}
			if err := s.limiter.Wait(ctx); err != nil {
				return found, deleted, err
			}
			uid := obj.GetUID()
			if err := cl.GetClient().Delete(ctx, obj, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
				if !apierrors.IsNotFound(err) {
					errs = append(errs, fmt.Errorf("deleting orphan %s %s: %w", o.Kind, o.Key, err))
				}
				continue
			}
			deleted++
			orphans.WithLabelValues(string(name), o.Kind.String(), ActionDeleted).Inc()
			logger.Info("Deleted an orphan", "kind", o.Kind.String(), "object", o.Key.String(), "owner", owner.String())
		}
	}
	return found, deleted, errors.Join(errs...)
}

// ownerState is what a sweep learned about an owner.
type ownerState struct {
	orphan bool
	err    error
}

// ownerLookup reads owners live from their clusters, each once per sweep.
type ownerLookup struct {
	t     *Tracker
	mu    sync.Mutex
	known map[Owner]ownerState
}

// orphaned reports whether owner's projections are orphans: the owner does not exist, or an
// object of another UID has its name.
func (l *ownerLookup) orphaned(ctx context.Context, owner Owner) (bool, error) {
	l.mu.Lock()
	state, ok := l.known[owner]
	l.mu.Unlock()
	if ok {
		return state.orphan, state.err
	}
	state.orphan, state.err = l.lookup(ctx, owner)
	l.mu.Lock()
	l.known[owner] = state
	l.mu.Unlock()
	return state.orphan, state.err
}

func (l *ownerLookup) lookup(ctx context.Context, owner Owner) (bool, error) {
	cl, err := l.t.mgr.GetCluster(ctx, owner.Cluster)
	if err != nil {
		return false, fmt.Errorf("owner's cluster %q: %w", owner.Cluster, err)
	}
	mapping, err := cl.GetRESTMapper().RESTMapping(owner.GroupKind())
	if err != nil {
		return false, fmt.Errorf("kind of the owner: %w", err)
	}
	got := &metav1.PartialObjectMetadata{}
	got.SetGroupVersionKind(mapping.GroupVersionKind)
	switch err := cl.GetAPIReader().Get(ctx, owner.Key(), got); {
	case apierrors.IsNotFound(err):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("reading the owner: %w", err)
	}
	return got.GetUID() != owner.UID, nil
}
