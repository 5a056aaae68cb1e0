// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package controller_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	mccontroller "mcr.dev/core/controller"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
	clustersprovider "mcr.dev/core/providers/clusters"
	mcreconcile "mcr.dev/core/reconcile"
)

const (
	// failoverMemberCount members, each holding failoverConfigMaps ConfigMaps in
	// failoverNamespace, so that the initial list of a cold controller costs something.
	failoverMemberCount = 20
	failoverConfigMaps  = 200
	failoverNamespace   = "failover"

	// The replicas' leader election: a crashed leader's Lease expires after 4s; the standby
	// tries to acquire it every 500ms.
	failoverLeaseDuration = 4 * time.Second
	failoverRenewDeadline = 3 * time.Second
	failoverRetryPeriod   = 500 * time.Millisecond

	// failoverStartParallelism bounds how many apiservers start at once: 20 at once on two
	// busy cores would run into the fleet's start timeout.
	failoverStartParallelism = 4
)

// failoverFleet is the package fleet's host (holding the Lease) plus failoverMemberCount
// members added the first time BenchmarkFailover runs; they live as long as the package fleet.
var failoverFleet struct {
	once    sync.Once
	members []string
	clients []client.Client
	err     error
}

// failoverMembers returns the benchmark's members and a client of each, starting them and
// filling them with ConfigMaps once per test binary.
func failoverMembers(b *testing.B) ([]string, []client.Client) {
	b.Helper()
	f := &failoverFleet
	f.once.Do(func() {
		f.members = make([]string, failoverMemberCount)
		f.clients = make([]client.Client, failoverMemberCount)
		errs := make([]error, failoverMemberCount)
		sem := make(chan struct{}, failoverStartParallelism)
		var wg sync.WaitGroup
		for i := range f.members {
			f.members[i] = fmt.Sprintf("failover-%02d", i)
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				f.clients[i], errs[i] = addFailoverMember(context.Background(), f.members[i])
			})
		}
		wg.Wait()
		f.err = errors.Join(errs...)
	})
	if f.err != nil {
		b.Fatalf("starting the failover fleet: %v", f.err)
	}
	return f.members, f.clients
}

func addFailoverMember(ctx context.Context, name string) (client.Client, error) {
	m, err := fleet.AddMember(ctx, name)
	if err != nil {
		return nil, err
	}
	c, err := client.New(m.Config(), client.Options{})
	if err != nil {
		return nil, fmt.Errorf("client of %s: %w", name, err)
	}
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: failoverNamespace}}); err != nil {
		return nil, fmt.Errorf("namespace in %s: %w", name, err)
	}
	for i := range failoverConfigMaps {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: failoverNamespace, Name: fmt.Sprintf("cm-%03d", i)},
			Data:       map[string]string{"payload": fmt.Sprintf("%0256d", i)},
		}
		if err := c.Create(ctx, cm); err != nil {
			return nil, fmt.Errorf("ConfigMap in %s: %w", name, err)
		}
	}
	return c, nil
}

// failoverMode is how the replicas are configured and how the leader stops.
type failoverMode struct {
	// warmup sets EnableWarmup on the controller.
	warmup bool
	// graceful sets LeaderElectionReleaseOnCancel: the stopping leader releases the Lease.
	// Without it the stop is a crash as far as the Lease goes: the standby waits until it expires.
	graceful bool
}

// failoverReplica is one replica of a leader-elected binary: a clusters provider engaging
// every member and one controller of ConfigMaps, which records when it first reconciles the
// marker ConfigMap of each member.
type failoverReplica struct {
	mgr    mcmanager.Manager
	sync   mcmanager.SyncReporter
	marker string

	cancel context.CancelFunc
	done   chan struct{}
	err    error // of mgr.Start, once done is closed

	mu         sync.Mutex
	reconciled map[multicluster.ClusterName]time.Time // first reconcile of each member's marker
	seen       map[mcreconcile.Request]bool           // requests of failoverNamespace reconciled
	backlogAt  time.Time                              // when seen was complete
}

func newFailoverReplica(b *testing.B, members []string, leaseID, marker string, mode failoverMode) *failoverReplica {
	b.Helper()
	p := clustersprovider.New(clustersprovider.Options{Logger: logr.Discard()})
	for _, name := range members {
		cl, err := cluster.New(fleet.Member(name).Config(), func(o *cluster.Options) { o.Logger = logr.Discard() })
		if err != nil {
			b.Fatal(err)
		}
		if err := p.Add(b.Context(), multicluster.ClusterName(name), cl); err != nil {
			b.Fatal(err)
		}
	}
	mgr, err := mcmanager.New(fleet.Member("host").Config(), p, mcmanager.Options{
		Logger:                        logr.Discard(),
		Metrics:                       metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:        "0",
		Controller:                    config.Controller{SkipNameValidation: ptr.To(true)},
		LeaderElection:                true,
		LeaderElectionID:              leaseID,
		LeaderElectionNamespace:       metav1.NamespaceDefault,
		LeaderElectionReleaseOnCancel: mode.graceful,
		LeaseDuration:                 ptr.To(failoverLeaseDuration),
		RenewDeadline:                 ptr.To(failoverRenewDeadline),
		RetryPeriod:                   ptr.To(failoverRetryPeriod),
	})
	if err != nil {
		b.Fatal(err)
	}
	r := &failoverReplica{mgr: mgr, marker: marker, reconciled: map[multicluster.ClusterName]time.Time{}, seen: map[mcreconcile.Request]bool{}}
	// Every ConfigMap of the namespace and the marker, in every member.
	backlog := len(members) * (failoverConfigMaps + 1)
	c, err := mccontroller.New("failover", mgr, mccontroller.Options{
		EnableWarmup: ptr.To(mode.warmup),
		Reconciler: mcreconcile.Func(func(_ context.Context, req mcreconcile.Request) (reconcile.Result, error) {
			if req.Namespace != failoverNamespace {
				return reconcile.Result{}, nil
			}
			now := time.Now()
			r.mu.Lock()
			defer r.mu.Unlock()
			if _, seen := r.reconciled[req.ClusterName]; !seen && req.Name == r.marker {
				r.reconciled[req.ClusterName] = now
			}
			if !r.seen[req] {
				r.seen[req] = true
				if len(r.seen) == backlog {
					r.backlogAt = now
				}
			}
			return reconcile.Result{}, nil
		}),
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := c.MultiClusterWatch(configMaps()); err != nil {
		b.Fatal(err)
	}
	var ok bool
	if r.sync, ok = c.(mcmanager.SyncReporter); !ok {
		b.Fatalf("the controller (%T) does not report its sync state", c)
	}
	return r
}

// start runs the replica until stop, or until the benchmark ends.
func (r *failoverReplica) start(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel, r.done = cancel, make(chan struct{})
	go func() {
		r.err = r.mgr.Start(ctx)
		close(r.done)
	}()
	b.Cleanup(func() {
		if err := r.stop(); err != nil {
			b.Errorf("manager: %v", err)
		}
	})
}

// stop stops the replica and returns what its manager returned; it may be called again.
func (r *failoverReplica) stop() error {
	r.cancel()
	<-r.done
	return r.err
}

// syncedAll reports whether the controller runs and its source has synced for every member.
func (r *failoverReplica) syncedAll(members []string) bool {
	for _, name := range members {
		if synced, applies := r.sync.SyncedFor(multicluster.ClusterName(name)); !synced || !applies {
			return false
		}
	}
	return true
}

// runsFor reports whether the controller's sources run for any member.
func (r *failoverReplica) runsFor(members []string) bool {
	for _, name := range members {
		if _, applies := r.sync.SyncedFor(multicluster.ClusterName(name)); applies {
			return true
		}
	}
	return false
}

// backlogDone returns when every ConfigMap of failoverNamespace, the markers included, had
// been reconciled once, or zero.
func (r *failoverReplica) backlogDone() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.backlogAt
}

// whenTrue polls cond every 5ms from now on and delivers the time it first held; it gives up
// when ctx ends.
func whenTrue(ctx context.Context, cond func() bool) <-chan time.Time {
	at := make(chan time.Time, 1)
	go func() {
		for !cond() {
			select {
			case <-ctx.Done():
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
		at <- time.Now()
	}()
	return at
}

// when waits for a time delivered by whenTrue or a watch of Elected; the timeout only bounds a
// hung benchmark.
func when(b *testing.B, what string, at <-chan time.Time) time.Time {
	b.Helper()
	select {
	case t := <-at:
		return t
	case <-time.After(3 * time.Minute):
		b.Fatalf("timed out waiting until %s", what)
		return time.Time{}
	}
}

// electedAt delivers the time the replica was elected.
func electedAt(ctx context.Context, r *failoverReplica) <-chan time.Time {
	at := make(chan time.Time, 1)
	go func() {
		select {
		case <-r.mgr.Elected():
			at <- time.Now()
		case <-ctx.Done():
		}
	}()
	return at
}

// BenchmarkFailover measures a failover of a leader-elected controller of ConfigMaps serving 20
// envtest members with 200 ConfigMaps each, from the moment the leader stops: until the
// standby is elected, and until the standby first reconciles a ConfigMap written in every
// member right after the stop. The controller of both replicas has EnableWarmup (warmup: the
// standby starts and syncs its sources for every member before it leads) or not (cold: they
// start when it is elected); the leader releases the Lease when it stops (graceful) or does not (crash: the
// standby waits for the 4s LeaseDuration to pass). Run with -benchtime 1x; the 20 members are
// started once per test binary, outside the timed part.
//
//	go test -run XXX -bench BenchmarkFailover -benchtime 1x ./controller
//
// Metrics, all in seconds from the leader's stop unless said otherwise:
//   - elect-s: the standby is elected (Elected is closed once its runnables have started, so
//     a warm controller may reconcile a moment before);
//   - first-reconcile-p50-s, first-reconcile-p99-s: the standby reconciles a member's marker,
//     over the members, pooled over the iterations (with 20 members p99 is the slowest one);
//   - all-members-s: the standby has reconciled the marker of every member;
//   - after-elect-s: all-members-s less elect-s, the part of the failover warmup is meant to save;
//   - backlog-s: the standby has reconciled each of the 20 × 201 ConfigMaps once (the initial
//     list, which controller-runtime's priority queue serves after fresh events like the
//     markers');
//   - warm-sync-s (warmup only): from the standby's start, before the failover, until its
//     controller has synced for every member;
//   - cold-sync-s (cold only): the standby's controller has synced for every member (polled
//     every 5ms, as are the waits in the set-up).
func BenchmarkFailover(b *testing.B) {
	members, clients := failoverMembers(b)
	for _, warm := range []struct {
		name   string
		warmup bool
	}{{"warmup", true}, {"cold", false}} {
		b.Run(warm.name, func(b *testing.B) {
			for _, stop := range []struct {
				name     string
				graceful bool
			}{{"graceful", true}, {"crash", false}} {
				b.Run(stop.name, func(b *testing.B) {
					benchmarkFailover(b, members, clients, failoverMode{warmup: warm.warmup, graceful: stop.graceful})
				})
			}
		})
	}
}

func benchmarkFailover(b *testing.B, members []string, clients []client.Client, mode failoverMode) {
	var elect, allMembers, afterElect, backlog, warmSync, coldSync time.Duration
	var firsts []time.Duration
	b.StopTimer()
	for i := range b.N {
		suffix := fmt.Sprintf("%d-%d", time.Now().UnixNano(), i)
		leaseID, marker := "mcr-failover-"+suffix, "marker-"+suffix

		leader := newFailoverReplica(b, members, leaseID, marker, mode)
		leader.start(b)
		when(b, "the first replica is elected", electedAt(b.Context(), leader))
		when(b, "the leader has synced every member", whenTrue(b.Context(), func() bool { return leader.syncedAll(members) }))

		standby := newFailoverReplica(b, members, leaseID, marker, mode)
		standbyStart := time.Now()
		standby.start(b)
		when(b, "the standby engages every member", whenTrue(b.Context(), func() bool {
			return len(standby.mgr.EngagedClusters()) == len(members)
		}))
		if mode.warmup {
			synced := when(b, "the standby warms up every member", whenTrue(b.Context(), func() bool { return standby.syncedAll(members) }))
			warmSync += synced.Sub(standbyStart)
		} else if standby.runsFor(members) {
			b.Fatal("the cold standby's controller runs before it leads")
		}
		select {
		case <-standby.mgr.Elected():
			b.Fatal("the standby was elected while the leader ran")
		default:
		}

		ctx, cancel := context.WithCancel(b.Context())
		elected := electedAt(ctx, standby)
		synced := whenTrue(ctx, func() bool { return standby.syncedAll(members) })
		backlogDone := whenTrue(ctx, func() bool { return !standby.backlogDone().IsZero() })

		b.StartTimer()
		stopped := time.Now()
		leader.cancel()
		errs := make([]error, len(members))
		var wg sync.WaitGroup
		for m, c := range clients {
			wg.Go(func() {
				errs[m] = c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: failoverNamespace, Name: marker}})
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			b.Fatalf("writing the marker ConfigMaps: %v", err)
		}
		electedIn := when(b, "the standby is elected", elected).Sub(stopped)
		elect += electedIn
		syncedAt := when(b, "the standby syncs every member", synced)
		when(b, "the standby reconciles every ConfigMap, the markers included, once", backlogDone)
		b.StopTimer()
		cancel()

		if !mode.warmup {
			coldSync += syncedAt.Sub(stopped)
		}
		standby.mu.Lock()
		var last time.Duration
		for _, at := range standby.reconciled {
			firsts = append(firsts, at.Sub(stopped))
			last = max(last, at.Sub(stopped))
		}
		backlog += standby.backlogAt.Sub(stopped)
		standby.mu.Unlock()
		allMembers += last
		afterElect += last - electedIn
		for _, r := range []*failoverReplica{leader, standby} {
			if err := r.stop(); err != nil {
				b.Errorf("manager: %v", err)
			}
		}
	}
	slices.Sort(firsts)
	n := float64(b.N)
	b.ReportMetric(elect.Seconds()/n, "elect-s")
	b.ReportMetric(quantile(firsts, 0.5).Seconds(), "first-reconcile-p50-s")
	b.ReportMetric(quantile(firsts, 0.99).Seconds(), "first-reconcile-p99-s")
	b.ReportMetric(allMembers.Seconds()/n, "all-members-s")
	b.ReportMetric(afterElect.Seconds()/n, "after-elect-s")
	b.ReportMetric(backlog.Seconds()/n, "backlog-s")
	if mode.warmup {
		b.ReportMetric(warmSync.Seconds()/n, "warm-sync-s")
	} else {
		b.ReportMetric(coldSync.Seconds()/n, "cold-sync-s")
	}
	// The timed part includes the polling; the metrics above are what counts.
	b.ReportMetric(0, "ns/op")
}

// quantile returns the q-quantile of sorted by nearest rank.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[max(int(math.Ceil(q*float64(len(sorted))))-1, 0)]
}
