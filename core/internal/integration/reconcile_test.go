// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	mcbuilder "mcr.dev/core/builder"
	"mcr.dev/core/clusters"
	mccontext "mcr.dev/core/context"
	mchandler "mcr.dev/core/handler"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
	mcreconcile "mcr.dev/core/reconcile"
)

// seen records the requests a reconciler handled.
type seen struct {
	mu   sync.Mutex
	reqs map[mcreconcile.Request]int
}

func newSeen() *seen { return &seen{reqs: map[mcreconcile.Request]int{}} }

func (s *seen) add(r mcreconcile.Request) {
	s.mu.Lock()
	s.reqs[r]++
	s.mu.Unlock()
}

func (s *seen) has(cl multicluster.ClusterName, ns, name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reqs[mcreconcile.Request{ClusterName: cl, Request: reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}] > 0
}

func (s *seen) clustersFor(ns string) map[multicluster.ClusterName]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[multicluster.ClusterName]bool{}
	for r := range s.reqs {
		if r.Namespace == ns {
			out[r.ClusterName] = true
		}
	}
	return out
}

// labeller is the uniform controller of the tests: it labels each ConfigMap of namespace ns with
// the name of the cluster it found it in, reading and writing through the manager's cluster.
func labeller(mgr mcmanager.Manager, ns string, s *seen) mcreconcile.Func {
	return func(ctx context.Context, req mcreconcile.Request) (reconcile.Result, error) {
		if req.Namespace != ns {
			return reconcile.Result{}, nil
		}
		s.add(req)
		cl, err := mgr.GetCluster(ctx, req.ClusterName)
		if err != nil {
			return reconcile.Result{}, err
		}
		cm := &corev1.ConfigMap{}
		if err := cl.GetClient().Get(ctx, req.NamespacedName, cm); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
		want := "cluster-" + string(req.ClusterName)
		if req.ClusterName == "" {
			want = "local"
		}
		if cm.Labels["mcr.dev/seen-in"] == want {
			return reconcile.Result{}, nil
		}
		if cm.Labels == nil {
			cm.Labels = map[string]string{}
		}
		cm.Labels["mcr.dev/seen-in"] = want
		return reconcile.Result{}, cl.GetClient().Update(ctx, cm)
	}
}

func labelOf(t *testing.T, member, ns, name string) string {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := memberClient(t, member).Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return ""
		}
		t.Fatalf("reading configmap: %v", err)
	}
	return cm.Labels["mcr.dev/seen-in"]
}

// The same reconciler runs unchanged with no provider: requests carry the local cluster.
func TestSingleClusterMode(t *testing.T) {
	ns := namespace(t, "host")
	s := newSeen()
	mgr := startManager(t, nil)
	if err := mcbuilder.ControllerManagedBy(mgr).Named("single-" + ns).For(&corev1.ConfigMap{}).Complete(labeller(mgr, ns, s)); err != nil {
		t.Fatal(err)
	}
	createConfigMap(t, "host", ns, "cm", nil)
	eventually(t, time.Minute, "the local configmap to be labeled", func() bool { return labelOf(t, "host", ns, "cm") == "local" })
	if !s.has(mcmanager.LocalCluster, ns, "cm") {
		t.Fatalf("reconciler did not see the request for the local cluster: %v", s.reqs)
	}
	if _, err := mgr.GetCluster(context.Background(), "elsewhere"); !errors.Is(err, multicluster.ErrClusterNotFound) {
		t.Fatalf("GetCluster of an unknown name without provider: got %v, want ErrClusterNotFound", err)
	}
}

// A uniform controller reconciles every member, each through its own cluster.
func TestUniformControllerAcrossFleet(t *testing.T) {
	ns := namespace(t, members...)
	p := newTestProvider(clusters.Options[cluster.Cluster]{})
	mgr := startManager(t, p)
	s := newSeen()
	if err := mcbuilder.ControllerManagedBy(mgr).Named("uniform-" + ns).For(&corev1.ConfigMap{}).Complete(labeller(mgr, ns, s)); err != nil {
		t.Fatal(err)
	}
	for _, m := range members {
		createConfigMap(t, m, ns, "cm", nil)
		p.mustAdd(t, m, fleet.Member(m).Config())
	}
	for _, m := range members {
		eventually(t, time.Minute, "configmap in "+m+" to be labeled", func() bool { return labelOf(t, m, ns, "cm") == "cluster-"+m })
	}
	// The local cluster is not engaged when there is a provider and nobody asked for it.
	if got := s.clustersFor(ns); got[mcmanager.LocalCluster] {
		t.Fatalf("local cluster was reconciled without being engaged: %v", got)
	}
	if got := mgr.EngagedClusters(); len(got) != len(members) {
		t.Fatalf("engaged clusters: got %v, want %v", got, members)
	}
}

// A controller added after clusters were engaged is engaged with them.
func TestControllerAddedAfterEngagement(t *testing.T) {
	ns := namespace(t, "a", "b")
	p := newTestProvider(clusters.Options[cluster.Cluster]{})
	mgr := startManager(t, p)
	createConfigMap(t, "a", ns, "cm", nil)
	createConfigMap(t, "b", ns, "cm", nil)
	p.mustAdd(t, "a", fleet.Member("a").Config())
	p.mustAdd(t, "b", fleet.Member("b").Config())
	eventually(t, time.Minute, "both clusters engaged", func() bool { return len(mgr.EngagedClusters()) == 2 })

	s := newSeen()
	if err := mcbuilder.ControllerManagedBy(mgr).Named("late-" + ns).For(&corev1.ConfigMap{}).Complete(labeller(mgr, ns, s)); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the late controller to reconcile both clusters", func() bool {
		return s.has("a", ns, "cm") && s.has("b", ns, "cm")
	})
}

// Reconciles for a cluster that left the fleet end without error and without requeue.
func TestVanishedClusterEndsQuietly(t *testing.T) {
	p := newTestProvider(clusters.Options[cluster.Cluster]{})
	mgr := startManager(t, p)
	calls := 0
	c, err := mcbuilder.ControllerManagedBy(mgr).Named("vanished").For(&corev1.ConfigMap{}).
		Build(mcreconcile.Func(func(ctx context.Context, req mcreconcile.Request) (reconcile.Result, error) {
			calls++
			_, err := mgr.GetCluster(ctx, req.ClusterName)
			return reconcile.Result{}, err
		}))
	if err != nil {
		t.Fatal(err)
	}
	req := mcreconcile.Request{ClusterName: "gone", Request: reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "x", Name: "y"}}}
	res, err := c.Reconcile(context.Background(), req)
	if err != nil || !res.IsZero() {
		t.Fatalf("reconcile of a vanished cluster: got (%+v, %v), want no error and no requeue", res, err)
	}
	if calls != 1 {
		t.Fatalf("reconciler calls: got %d, want 1", calls)
	}

	// Without the wrapper the error reaches controller-runtime (and would be retried).
	c2, err := mcbuilder.ControllerManagedBy(mgr).Named("vanished-unwrapped").For(&corev1.ConfigMap{}).WithClusterNotFoundWrapper(false).
		Build(mcreconcile.Func(func(ctx context.Context, req mcreconcile.Request) (reconcile.Result, error) {
			_, err := mgr.GetCluster(ctx, req.ClusterName)
			return reconcile.Result{}, err
		}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c2.Reconcile(context.Background(), req); !errors.Is(err, multicluster.ErrClusterNotFound) {
		t.Fatalf("without the wrapper: got %v, want ErrClusterNotFound", err)
	}
}

// Reconcilers find their cluster in the context, so single-cluster code can be reused.
func TestClusterFromContext(t *testing.T) {
	ns := namespace(t, "a")
	p := newTestProvider(clusters.Options[cluster.Cluster]{})
	mgr := startManager(t, p)
	found := make(chan string, 10)
	single := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		if req.Namespace != ns {
			return reconcile.Result{}, nil
		}
		cl, err := mgr.ClusterFromContext(ctx)
		if err != nil {
			return reconcile.Result{}, err
		}
		cm := &corev1.ConfigMap{}
		if err := cl.GetClient().Get(ctx, req.NamespacedName, cm); err != nil {
			return reconcile.Result{}, err
		}
		name, _ := mccontext.ClusterFrom(ctx)
		found <- string(name) + "/" + cm.Data["k"]
		return reconcile.Result{}, nil
	})
	if err := mcbuilder.ControllerManagedBy(mgr).Named("fromctx").For(&corev1.ConfigMap{}).Complete(mccontext.ReconcilerWithClusterInContext(single)); err != nil {
		t.Fatal(err)
	}
	createConfigMap(t, "a", ns, "cm", map[string]string{"k": "from-a"})
	p.mustAdd(t, "a", fleet.Member("a").Config())
	select {
	case got := <-found:
		if got != "a/from-a" {
			t.Fatalf("got %q, want %q", got, "a/from-a")
		}
	case <-time.After(time.Minute):
		t.Fatal("timed out waiting for the reconcile")
	}
}

// Map functions can enqueue requests for another cluster (fan-out to the hub) and for the
// cluster the event came from.
func TestCrossClusterFanOut(t *testing.T) {
	ns := namespace(t, "a", "b")
	p := newTestProvider(clusters.Options[cluster.Cluster]{})
	mgr := startManager(t, p, mcmanager.WithLocalClusterEngaged())
	s := newSeen()
	err := mcbuilder.ControllerManagedBy(mgr).Named("fanout-"+ns).
		Watches(&corev1.ConfigMap{}, mchandler.EnqueueRequestsFromClusterMapFunc(func(_ context.Context, source multicluster.ClusterName, obj client.Object) []mcreconcile.Request {
			if obj.GetNamespace() != ns || source == mcmanager.LocalCluster {
				return nil
			}
			return []mcreconcile.Request{
				// The hub keeps one summary per member...
				{ClusterName: mcmanager.LocalCluster, Request: reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "summary-" + string(source)}}},
				// ...and the member's own object is reconciled too.
				{ClusterName: source, Request: reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: obj.GetName()}}},
			}
		})).
		Complete(mcreconcile.Func(func(_ context.Context, req mcreconcile.Request) (reconcile.Result, error) {
			s.add(req)
			return reconcile.Result{}, nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	createConfigMap(t, "a", ns, "cm", nil)
	createConfigMap(t, "b", ns, "cm", nil)
	p.mustAdd(t, "a", fleet.Member("a").Config())
	p.mustAdd(t, "b", fleet.Member("b").Config())
	eventually(t, time.Minute, "fan-out requests", func() bool {
		return s.has("", ns, "summary-a") && s.has("", ns, "summary-b") && s.has("a", ns, "cm") && s.has("b", ns, "cm")
	})
}

// Per-watch cluster filters: a watch restricted to cluster a never sees events of cluster b,
// while an unrestricted watch of the same controller sees both.
func TestPerWatchClusterFilter(t *testing.T) {
	ns := namespace(t, "a", "b")
	p := newTestProvider(clusters.Options[cluster.Cluster]{})
	mgr := startManager(t, p)
	s := newSeen()
	onlyA := mcbuilder.WithClusterFilter(func(name multicluster.ClusterName, _ cluster.Cluster) bool { return name == "a" })
	err := mcbuilder.ControllerManagedBy(mgr).Named("filter-"+ns).
		Watches(&corev1.ConfigMap{}, mchandler.EnqueueRequestForObject, onlyA).
		Watches(&corev1.Secret{}, mchandler.EnqueueRequestForObject).
		Complete(mcreconcile.Func(func(_ context.Context, req mcreconcile.Request) (reconcile.Result, error) {
			if req.Namespace == ns {
				s.add(req)
			}
			return reconcile.Result{}, nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	createConfigMap(t, "a", ns, "cm", nil)
	createConfigMap(t, "b", ns, "cm", nil)
	for _, m := range []string{"a", "b"} {
		sec := &corev1.Secret{}
		sec.Namespace, sec.Name = ns, "secret"
		if err := memberClient(t, m).Create(context.Background(), sec); err != nil {
			t.Fatal(err)
		}
	}
	p.mustAdd(t, "a", fleet.Member("a").Config())
	p.mustAdd(t, "b", fleet.Member("b").Config())
	// The Secret watch covers b, so once b's Secret has been reconciled b's initial list has been
	// delivered; the ConfigMap in b must not have been.
	eventually(t, time.Minute, "secrets in both clusters and the configmap in a", func() bool {
		return s.has("a", ns, "secret") && s.has("b", ns, "secret") && s.has("a", ns, "cm")
	})
	if s.has("b", ns, "cm") {
		t.Fatalf("the ConfigMap watch restricted to cluster a delivered an event of cluster b")
	}
}

// Framework log lines carry cluster, namespace and name.
func TestLogLinesCarryCluster(t *testing.T) {
	ns := namespace(t, "a")
	logger, lines := captureLogger()
	p := newTestProvider(clusters.Options[cluster.Cluster]{})
	mgr := startManagerWithLogger(t, p, logger)
	err := mcbuilder.ControllerManagedBy(mgr).Named("logs-" + ns).For(&corev1.ConfigMap{}).
		Complete(mcreconcile.Func(func(_ context.Context, req mcreconcile.Request) (reconcile.Result, error) {
			if req.Namespace == ns {
				return reconcile.Result{}, reconcile.TerminalError(fmt.Errorf("boom in %s", req.ClusterName))
			}
			return reconcile.Result{}, nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	createConfigMap(t, "a", ns, "cm", nil)
	p.mustAdd(t, "a", fleet.Member("a").Config())
	want := []string{`"cluster"="a"`, `"namespace"="` + ns + `"`, `"name"="cm"`, `"msg"="Reconciler error"`}
	eventually(t, time.Minute, "a reconciler error log line with cluster, namespace and name", func() bool {
		for _, l := range lines() {
			ok := true
			for _, w := range want {
				ok = ok && strings.Contains(l, w)
			}
			if ok {
				return true
			}
		}
		return false
	})
}
