// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"bytes"
	"context"
	"net"
	"runtime"
	"runtime/pprof"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	mcbuilder "mcr.dev/core/builder"
	"mcr.dev/core/clusters"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/metrics"
	"mcr.dev/core/multicluster"
	mcreconcile "mcr.dev/core/reconcile"
)

// hungServer accepts connections and never answers: the worst kind of member.
func hungServer(t *testing.T) *rest.Config {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	cfg := fleet.Member("a").Config()
	cfg.Host = "https://" + l.Addr().String()
	return cfg
}

// One member down and one hung never delay the others: the healthy member is engaged and
// reconciled while the broken ones are still failing; the hung one is reported as an error
// after the controller's CacheSyncTimeout; the member that was down is reconciled once it is
// back (the controller keeps retrying).
func TestEngagementIsConcurrent(t *testing.T) {
	ctx := context.Background()
	down, err := fleet.AddMember(ctx, "down")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fleet.RemoveMember("down") })
	ns := namespace(t, "a", "down")
	createConfigMap(t, "a", ns, "cm", nil)
	createConfigMap(t, "down", ns, "cm", nil)
	if err := down.Stop(); err != nil {
		t.Fatal(err)
	}

	p := newTestProvider(clusters.Options[cluster.Cluster]{CacheSyncTimeout: 3 * time.Second})
	mgr := startManager(t, p)
	s := newSeen()
	name := "concurrent-" + ns
	err = mcbuilder.ControllerManagedBy(mgr).Named(name).For(&corev1.ConfigMap{}).
		WithOptions(controller.TypedOptions[mcreconcile.Request]{CacheSyncTimeout: 3 * time.Second}).
		Complete(labeller(mgr, ns, s))
	if err != nil {
		t.Fatal(err)
	}
	errorsBefore := testutil.ToFloat64(metrics.ClusterSourceErrors.WithLabelValues(name))

	// The broken members are discovered first.
	addErrs := make(chan error, 2)
	go func() { addErrs <- p.add(t, "down", down.Config()) }()
	go func() { addErrs <- p.add(t, "hung", hungServer(t)) }()
	time.Sleep(100 * time.Millisecond)

	discovered := time.Now()
	p.mustAdd(t, "a", fleet.Member("a").Config())
	eventually(t, time.Minute, "the healthy member to be reconciled", func() bool { return labelOf(t, "a", ns, "cm") == "cluster-a" })
	t.Logf("healthy member reconciled %s after discovery, with one member down and one hung", time.Since(discovered).Round(time.Millisecond))
	if s.has("down", ns, "cm") {
		t.Fatal("the stopped member was reconciled while its apiserver was down")
	}

	eventually(t, time.Minute, "the hung member to be reported as an error", func() bool {
		return testutil.ToFloat64(metrics.ClusterSourceErrors.WithLabelValues(name)) > errorsBefore
	})

	if err := down.Start(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, "the member that was down to be reconciled once it is back", func() bool {
		return labelOf(t, "down", ns, "cm") == "cluster-down"
	})
	for range 2 {
		select {
		case err := <-addErrs:
			t.Logf("adding a broken member returned: %v", err)
		case <-time.After(time.Minute):
			t.Fatal("adding a broken member blocked for more than a minute")
		}
	}
}

// Disengaging releases everything of the cluster: after 200 engage/disengage cycles, each
// proven by a reconcile through the engaged instance, the goroutine count is back at its
// baseline. Two ways to disengage are churned: the provider stops the cluster with its
// engagement (the usual case), and the cluster keeps running while only its engagement ends (so
// nothing but the controller's own cleanup can release the per-cluster event handlers).
func TestChurnLeavesNoGoroutines(t *testing.T) {
	const cycles = 200
	ns := namespace(t, "a")
	createConfigMap(t, "a", ns, "cm", nil)
	p := newTestProvider(clusters.Options[cluster.Cluster]{})
	mgr := startManager(t, p)
	reconciled := make(chan cluster.Cluster, 16)
	err := mcbuilder.ControllerManagedBy(mgr).Named("churn-" + ns).For(&corev1.ConfigMap{}).
		Complete(mcreconcile.Func(func(ctx context.Context, req mcreconcile.Request) (reconcile.Result, error) {
			if req.Namespace != ns {
				return reconcile.Result{}, nil
			}
			cl, err := mgr.GetCluster(ctx, req.ClusterName)
			if err != nil {
				return reconcile.Result{}, err
			}
			if err := cl.GetClient().Get(ctx, req.NamespacedName, &corev1.ConfigMap{}); err != nil {
				return reconcile.Result{}, err
			}
			select {
			case reconciled <- cl:
			default:
			}
			return reconcile.Result{}, nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	<-p.started
	waitReconciled := func(cl cluster.Cluster) {
		deadline := time.After(time.Minute)
		for {
			select {
			case got := <-reconciled:
				if got == cl {
					return
				}
			case <-deadline:
				t.Fatal("timed out waiting for a reconcile through the engaged cluster")
			}
		}
	}
	newCluster := func() cluster.Cluster {
		cl, err := cluster.New(fleet.Member("a").Config(), func(o *cluster.Options) { o.Logger = mgr.GetLogger() })
		if err != nil {
			t.Fatal(err)
		}
		return cl
	}

	t.Run("cluster stopped with its engagement", func(t *testing.T) {
		measureChurn(t, cycles, func() {
			cl := newCluster()
			if err := p.Add(p.ctx, "churn", cl, p.aware); err != nil {
				t.Fatal(err)
			}
			waitReconciled(cl)
			p.Remove("churn")
			eventually(t, time.Minute, "the cluster to be disengaged", func() bool { return len(mgr.EngagedClusters()) == 0 })
		})
	})

	t.Run("cluster kept running", func(t *testing.T) {
		// A provider that hands out long-lived clusters (a shared cache, as the namespace
		// provider does) and only cancels engagements.
		shared := &singleClusterProvider{cl: newCluster()}
		runCtx, stop := context.WithCancel(context.Background())
		defer stop()
		go func() { _ = shared.cl.Start(runCtx) }()
		if !shared.cl.GetCache().WaitForCacheSync(runCtx) {
			t.Fatal("shared cluster did not sync")
		}
		mgr2 := startManager(t, shared)
		err := mcbuilder.ControllerManagedBy(mgr2).Named("churn-shared-" + ns).For(&corev1.ConfigMap{}).
			Complete(mcreconcile.Func(func(_ context.Context, req mcreconcile.Request) (reconcile.Result, error) {
				if req.Namespace == ns {
					select {
					case reconciled <- shared.cl:
					default:
					}
				}
				return reconcile.Result{}, nil
			}))
		if err != nil {
			t.Fatal(err)
		}
		measureChurn(t, cycles, func() {
			engCtx, disengage := context.WithCancel(runCtx)
			if err := mgr2.Engage(engCtx, "shared", shared.cl); err != nil {
				t.Fatal(err)
			}
			waitReconciled(shared.cl)
			disengage()
			eventually(t, time.Minute, "the cluster to be disengaged", func() bool { return len(mgr2.EngagedClusters()) == 0 })
		})
	})
}

// singleClusterProvider serves one long-lived cluster that the test engages by hand.
type singleClusterProvider struct{ cl cluster.Cluster }

func (s *singleClusterProvider) Get(_ context.Context, name multicluster.ClusterName) (cluster.Cluster, error) {
	if name != "shared" {
		return nil, multicluster.ErrClusterNotFound
	}
	return s.cl, nil
}

func (s *singleClusterProvider) IndexField(ctx context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	return s.cl.GetFieldIndexer().IndexField(ctx, obj, field, extract)
}

// measureChurn runs cycle a few times to warm up, then the given number of times, and fails if
// the goroutine count does not come back to its baseline.
func measureChurn(t *testing.T, cycles int, cycle func()) {
	t.Helper()
	for range 5 { // lazily created shared state is not a leak
		cycle()
	}
	baseline := settledGoroutines(runtime.NumGoroutine())
	peak := baseline
	for range cycles {
		cycle()
		peak = max(peak, runtime.NumGoroutine())
	}
	const tolerance = 3
	var final int
	deadline := time.Now().Add(30 * time.Second)
	for {
		final = runtime.NumGoroutine()
		if final <= baseline+tolerance || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("goroutines: baseline %d, peak %d, after %d cycles %d (%+.3f per cycle)", baseline, peak, cycles, final, float64(final-baseline)/float64(cycles))
	if final > baseline+tolerance {
		var buf bytes.Buffer
		_ = pprof.Lookup("goroutine").WriteTo(&buf, 1)
		t.Fatalf("goroutines leaked: baseline %d, after %d cycles %d\n%s", baseline, cycles, final, buf.String())
	}
}

// settledGoroutines waits briefly for transient goroutines to end and returns the count.
func settledGoroutines(current int) int {
	for range 20 {
		time.Sleep(50 * time.Millisecond)
		n := runtime.NumGoroutine()
		if n >= current {
			return n
		}
		current = n
	}
	return current
}

// The local cluster can take part as an ordinary engaged cluster, and field indexes reach every
// engaged cluster, present and future, the local one included.
func TestLocalClusterAndFieldIndexes(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t, "host", "a", "b")
	for _, m := range []string{"host", "a", "b"} {
		createConfigMap(t, m, ns, "indexed", map[string]string{"color": "blue-" + ns})
	}
	p := newTestProvider(clusters.Options[cluster.Cluster]{})
	mgr := startManager(t, p, mcmanager.WithLocalClusterEngaged())
	s := newSeen()
	if err := mcbuilder.ControllerManagedBy(mgr).Named("local-" + ns).For(&corev1.ConfigMap{}).Complete(labeller(mgr, ns, s)); err != nil {
		t.Fatal(err)
	}
	p.mustAdd(t, "a", fleet.Member("a").Config())
	eventually(t, time.Minute, "local and a engaged", func() bool { return len(mgr.EngagedClusters()) == 2 })

	// Index registered while "a" and the local cluster are engaged; "b" comes later.
	field := "color-" + ns
	if err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.ConfigMap{}, field, func(o client.Object) []string {
		return []string{o.(*corev1.ConfigMap).Data["color"]}
	}); err != nil {
		t.Fatalf("IndexField: %v", err)
	}
	p.mustAdd(t, "b", fleet.Member("b").Config())

	for _, name := range []multicluster.ClusterName{mcmanager.LocalCluster, "a", "b"} {
		cl, err := mgr.GetCluster(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, time.Minute, "the index to answer in cluster "+string(name), func() bool {
			var list corev1.ConfigMapList
			if err := cl.GetCache().List(ctx, &list, client.InNamespace(ns), client.MatchingFields{field: "blue-" + ns}); err != nil {
				t.Logf("listing by index in %q: %v", name, err)
				return false
			}
			return len(list.Items) == 1 && list.Items[0].Name == "indexed"
		})
	}
	eventually(t, time.Minute, "the local cluster to be reconciled as an ordinary cluster", func() bool {
		return labelOf(t, "host", ns, "indexed") == "local" && labelOf(t, "b", ns, "indexed") == "cluster-b"
	})
}

// Engagement and reconciles are visible through controller-runtime's metrics registry.
func TestMetrics(t *testing.T) {
	ns := namespace(t, "a")
	p := newTestProvider(clusters.Options[cluster.Cluster]{})
	mgr := startManager(t, p)
	name := "metrics-" + ns
	s := newSeen()
	if err := mcbuilder.ControllerManagedBy(mgr).Named(name).For(&corev1.ConfigMap{}).Complete(labeller(mgr, ns, s)); err != nil {
		t.Fatal(err)
	}
	attempts := testutil.ToFloat64(metrics.EngageAttempts.WithLabelValues(metrics.ResultSuccess))
	createConfigMap(t, "a", ns, "cm", nil)
	p.mustAdd(t, "a", fleet.Member("a").Config())
	eventually(t, time.Minute, "a reconcile in a", func() bool { return s.has("a", ns, "cm") })
	eventually(t, time.Minute, "reconciles of a counted", func() bool {
		return testutil.ToFloat64(metrics.ReconcileTotal.WithLabelValues(name, "a", metrics.ResultSuccess)) > 0
	})
	if got := testutil.ToFloat64(metrics.EngageAttempts.WithLabelValues(metrics.ResultSuccess)); got <= attempts {
		t.Fatalf("engage attempts did not grow: before %v, after %v", attempts, got)
	}
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"mcr_engaged_clusters": false, "mcr_engage_attempts_total": false, "mcr_engage_duration_seconds": false, "mcr_reconcile_total": false}
	for _, f := range families {
		if _, ok := want[f.GetName()]; ok {
			want[f.GetName()] = true
		}
	}
	for n, ok := range want {
		if !ok {
			t.Errorf("metric %s is not served by controller-runtime's registry", n)
		}
	}
	// Series of a disengaged cluster are dropped.
	p.Remove("a")
	eventually(t, time.Minute, "the reconcile series of a to be dropped", func() bool {
		return !hasSeries(t, name, "a")
	})
}

func hasSeries(t *testing.T, controllerName, clusterName string) bool {
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "mcr_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			var ctrl, cl string
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "controller":
					ctrl = l.GetValue()
				case "cluster":
					cl = l.GetValue()
				}
			}
			if ctrl == controllerName && cl == clusterName {
				return true
			}
		}
	}
	return false
}
