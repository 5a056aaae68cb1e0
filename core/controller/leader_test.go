// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package controller_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	mccontroller "mcr.dev/core/controller"
	mchandler "mcr.dev/core/handler"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/providers/single"
	mcreconcile "mcr.dev/core/reconcile"
	mcsource "mcr.dev/core/source"
)

// informerLog records the types whose informers a cluster's cache was asked for.
type informerLog struct {
	cache.Cache
	mu    sync.Mutex
	types []string
}

func (l *informerLog) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	l.mu.Lock()
	l.types = append(l.types, fmt.Sprintf("%T", obj))
	l.mu.Unlock()
	return l.Cache.GetInformer(ctx, obj, opts...)
}

func (l *informerLog) asked(obj client.Object) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Contains(l.types, fmt.Sprintf("%T", obj))
}

// loggedCluster is a cluster whose cache records the informers asked for.
type loggedCluster struct {
	cluster.Cluster
	informers *informerLog
}

func (c *loggedCluster) GetCache() cache.Cache { return c.informers }

// replica is one replica of a leader-elected binary with three controllers of member "a": one
// that runs without the leader election, one that warms up, one with the defaults.
type replica struct {
	mgr        mcmanager.Manager
	member     *loggedCluster
	reconciled sync.Map // controller name → true once it reconciled on this replica
}

func newReplica(t *testing.T, leaseID, namespace string) *replica {
	t.Helper()
	cl, err := cluster.New(fleet.Member("a").Config())
	if err != nil {
		t.Fatal(err)
	}
	r := &replica{member: &loggedCluster{Cluster: cl, informers: &informerLog{Cache: cl.GetCache()}}}
	r.mgr, err = mcmanager.New(fleet.Member("host").Config(), single.New("a", r.member), mcmanager.Options{
		Logger:                  logr.Discard(),
		Metrics:                 metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:  "0",
		Controller:              config.Controller{SkipNameValidation: ptr.To(true)},
		LeaderElection:          true,
		LeaderElectionID:        leaseID,
		LeaderElectionNamespace: metav1.NamespaceDefault,
		LeaseDuration:           ptr.To(15 * time.Second),
		RenewDeadline:           ptr.To(10 * time.Second),
		RetryPeriod:             ptr.To(time.Second),
	})
	if err != nil {
		t.Fatal(err)
	}
	add := func(name string, src mcsource.Source, opts mccontroller.Options) {
		opts.Reconciler = mcreconcile.Func(func(context.Context, mcreconcile.Request) (reconcile.Result, error) {
			r.reconciled.Store(name, true)
			return reconcile.Result{}, nil
		})
		c, err := mccontroller.New(name, r.mgr, opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.MultiClusterWatch(src); err != nil {
			t.Fatal(err)
		}
	}
	add("no-leader", mcsource.Kind(&corev1.ConfigMap{}, mchandler.TypedEnqueueRequestForObject[*corev1.ConfigMap](),
		predicate.NewTypedPredicateFuncs(func(o *corev1.ConfigMap) bool { return o.Namespace == namespace })),
		mccontroller.Options{NeedLeaderElection: ptr.To(false)})
	add("warm", mcsource.Kind(&corev1.Secret{}, mchandler.TypedEnqueueRequestForObject[*corev1.Secret](),
		predicate.NewTypedPredicateFuncs(func(o *corev1.Secret) bool { return o.Namespace == namespace })),
		mccontroller.Options{EnableWarmup: ptr.To(true)})
	add("plain", mcsource.Kind(&corev1.ServiceAccount{}, mchandler.TypedEnqueueRequestForObject[*corev1.ServiceAccount](),
		predicate.NewTypedPredicateFuncs(func(o *corev1.ServiceAccount) bool { return o.Namespace == namespace })),
		mccontroller.Options{})
	return r
}

func (r *replica) start(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
}

func (r *replica) didReconcile(name string) bool {
	_, ok := r.reconciled.Load(name)
	return ok
}

// TestControllersHonorLeaderElectionAndWarmup runs two replicas of one binary against the same
// Lease: the leader reconciles with all three controllers; the standby, which never leads
// during the test, reconciles with the controller that needs no leader election, has started
// and synced the sources of the warmed-up controller (so that a failover only costs the Lease),
// and has not touched those of the default controller.
func TestControllersHonorLeaderElectionAndWarmup(t *testing.T) {
	suffix := fmt.Sprintf("%d", time.Now().UnixNano())
	namespace := "le-" + suffix
	member, err := client.New(fleet.Member("a").Config(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := member.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		t.Fatal(err)
	}
	leader := newReplica(t, "mcr-le-"+suffix, namespace)
	leader.start(t)
	select {
	case <-leader.mgr.Elected():
	case <-time.After(time.Minute):
		t.Fatal("the first replica was not elected")
	}
	standby := newReplica(t, "mcr-le-"+suffix, namespace)
	standby.start(t)

	meta := metav1.ObjectMeta{Namespace: namespace, Name: "le"}
	for _, obj := range []client.Object{&corev1.ConfigMap{ObjectMeta: meta}, &corev1.Secret{ObjectMeta: meta}, &corev1.ServiceAccount{ObjectMeta: meta}} {
		if err := member.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
	waitUntil(t, "the leader reconciles with every controller", func() bool {
		return leader.didReconcile("no-leader") && leader.didReconcile("warm") && leader.didReconcile("plain")
	})
	waitUntil(t, "the standby reconciles with the controller that has NeedLeaderElection=false", func() bool {
		return standby.didReconcile("no-leader")
	})
	waitUntil(t, "the standby warms up the controller with EnableWarmup: its Secret source is started and synced", func() bool {
		if !standby.member.informers.asked(&corev1.Secret{}) {
			return false
		}
		inf, err := standby.member.informers.Cache.GetInformer(t.Context(), &corev1.Secret{}, cache.BlockUntilSynced(false))
		return err == nil && inf.HasSynced()
	})
	select {
	case <-standby.mgr.Elected():
		t.Fatal("the standby was elected while the leader was running: the test cannot tell the groups apart")
	default:
	}
	if standby.didReconcile("warm") || standby.didReconcile("plain") {
		t.Error("a controller that needs the leader election reconciled on the standby")
	}
	if standby.member.informers.asked(&corev1.ServiceAccount{}) {
		t.Error("the standby started the sources of a controller without warmup before it leads")
	}
}

// waitUntil polls cond for up to a minute.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out: %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
