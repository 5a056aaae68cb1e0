// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package controller_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/config"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	mccontext "mcr.dev/core/context"
	mccontroller "mcr.dev/core/controller"
	"mcr.dev/core/envtest"
	mchandler "mcr.dev/core/handler"
	"mcr.dev/core/internal/testcheck"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/metrics"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/core/providers/single"
	mcreconcile "mcr.dev/core/reconcile"
	mcsource "mcr.dev/core/source"
)

// fleet is shared by the tests of this package: starting apiservers is the slow part, so tests
// isolate themselves by namespace and controller name. "host" runs managers, "a" and "b" are
// ordinary members, and "flaky" is stopped and started by tests that need an outage.
var fleet *envtest.Fleet

func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard())
	// Informers of clusters that refuse to list log every retry through klog.
	klog.SetLogger(logr.Discard())
	envtest.Main(m, envtest.Options{Members: []string{"host", "a", "b", "flaky"}}, func(f *envtest.Fleet) error {
		fleet = f
		return nil
	})
}

// A cluster engaged again under the same name with a different instance replaces the earlier
// one: the old instance's event handlers are removed and the new one's events are reconciled
// under the same name. Engaging the same instance again changes nothing.
func TestReengageReplacesEarlierInstance(t *testing.T) {
	ns := namespace(t, "a", "b")
	first, second := startedCluster(t, fleet.Member("a").Config()), startedCluster(t, fleet.Member("b").Config())
	rec := newRecorder(ns)
	c := startController(t, "reengage-"+ns, rec, mccontroller.Options{})

	ctx := t.Context()
	if err := c.Engage(ctx, "x", first); err != nil {
		t.Fatal(err)
	}
	createConfigMap(t, "a", ns, "in-first")
	rec.waitFor(t, "x", "in-first")
	testcheck.WaitFor(t, "the first instance to have one handler", func() bool { return first.handlers() == 1 })

	if err := c.Engage(ctx, "x", second); err != nil {
		t.Fatal(err)
	}
	testcheck.WaitFor(t, "the first instance's handler to be removed", func() bool { return first.handlers() == 0 })
	createConfigMap(t, "b", ns, "in-second")
	rec.waitFor(t, "x", "in-second")
	if n := second.handlers(); n != 1 {
		t.Fatalf("the second instance has %d handlers, want 1", n)
	}

	// The same instance again is a no-op: the engagement goes on, with one handler.
	if err := c.Engage(ctx, "x", second); err != nil {
		t.Fatal(err)
	}
	createConfigMap(t, "b", ns, "after-noop")
	rec.waitFor(t, "x", "after-noop")
	if n := second.handlers(); n != 1 {
		t.Fatalf("after engaging the same instance again, it has %d handlers, want 1", n)
	}
	// The first instance has no handler left, so its ConfigMap can never be reconciled; the one
	// created after it in the second instance shows the controller got that far.
	createConfigMap(t, "a", ns, "in-first-late")
	createConfigMap(t, "b", ns, "in-second-late")
	rec.waitFor(t, "x", "in-second-late")
	if rec.saw("x", "in-first-late") {
		t.Fatal("an event of the replaced instance was reconciled")
	}
}

// A source that cannot start (its cluster's apiserver is down) is retried with backoff, is
// reported, and does not hold up other clusters; once the apiserver is back, its events are
// reconciled without re-engaging.
func TestSourceIsRetriedUntilItStarts(t *testing.T) {
	flaky := fleet.Member("flaky")
	stopMember(t, flaky)
	ns := namespace(t, "a")
	logs := &providertest.LogBuffer{}
	name := "retry-" + ns
	rec := newRecorder(ns)
	c := startController(t, name, rec, mccontroller.Options{Logger: logs.Logger()})

	down := startedCluster(t, flaky.Config())
	good := startedCluster(t, fleet.Member("a").Config())
	if err := c.Engage(t.Context(), "flaky", down); err != nil {
		t.Fatal(err)
	}
	if err := c.Engage(t.Context(), "good", good); err != nil {
		t.Fatal(err)
	}
	testcheck.WaitFor(t, "two failed starts of the flaky source", func() bool { return sourceErrors(t, name) >= 2 })
	for _, backoff := range []string{"1s", "2s"} {
		if notLogged(logs, `"msg"="Cannot watch cluster, will retry"`, `"cluster"="flaky"`, `"retryIn"="`+backoff+`"`) {
			t.Fatalf("no retry in %s was logged for cluster flaky:\n%s", backoff, logs)
		}
	}
	// The flaky source keeps retrying while the other cluster is served.
	createConfigMap(t, "a", ns, "cm")
	rec.waitFor(t, "good", "cm")

	if err := flaky.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := memberClient(t, "flaky").Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	createConfigMap(t, "flaky", ns, "cm")
	rec.waitFor(t, "flaky", "cm")
}

// A cluster whose cache never syncs (its credentials may not list ConfigMaps) does not delay
// other clusters, and is reported with an error once CacheSyncTimeout has passed.
func TestSyncTimeout(t *testing.T) {
	ns := namespace(t, "a")
	createConfigMap(t, "a", ns, "cm")
	forbidden := forbiddenConfig(t, "b")

	t.Run("other clusters are not delayed", func(t *testing.T) {
		logs := &providertest.LogBuffer{}
		rec := newRecorder(ns)
		// Long enough that the stuck cluster is certainly still waiting when the test ends.
		c := startController(t, "sync-wait-"+ns, rec, mccontroller.Options{Logger: logs.Logger(), CacheSyncTimeout: time.Hour})
		stuck := startedCluster(t, forbidden)
		engaged := make(chan error, 1)
		go func() { engaged <- c.Engage(t.Context(), "stuck", stuck) }()
		var err error
		testcheck.WaitFor(t, "Engage of the stuck cluster to return", func() bool {
			select {
			case err = <-engaged:
				return true
			default:
				return false
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		testcheck.WaitFor(t, "the stuck cluster's handler", func() bool { return stuck.handlers() == 1 })
		if err := c.Engage(t.Context(), "good", startedCluster(t, fleet.Member("a").Config())); err != nil {
			t.Fatal(err)
		}
		rec.waitFor(t, "good", "cm")
		if logged(logs, "did not sync") {
			t.Fatalf("a sync timeout was reported an hour early:\n%s", logs)
		}
	})

	t.Run("a cluster that never syncs is reported", func(t *testing.T) {
		const timeout = 2 * time.Second
		logs := &providertest.LogBuffer{}
		rec := newRecorder(ns)
		name := "sync-timeout-" + ns
		c := startController(t, name, rec, mccontroller.Options{Logger: logs.Logger(), CacheSyncTimeout: timeout})
		engaged := time.Now()
		if err := c.Engage(t.Context(), "stuck", startedCluster(t, forbidden)); err != nil {
			t.Fatal(err)
		}
		want := []string{`"msg"="Cluster did not sync in time; its events will flow once it does"`, `"cluster"="stuck"`,
			`"timeout"="2s"`, "waiting for *v1.ConfigMap cache to sync", "context deadline exceeded"}
		testcheck.WaitFor(t, "the sync timeout to be reported", func() bool { return logged(logs, want...) })
		if elapsed := time.Since(engaged); elapsed < timeout {
			t.Fatalf("the sync timeout was reported after %s, before CacheSyncTimeout (%s)", elapsed, timeout)
		}
		if n := sourceErrors(t, name); n < 1 {
			t.Fatalf("no source error was counted for the controller (%v)", n)
		}
		// The controller goes on serving clusters engaged afterwards.
		if err := c.Engage(t.Context(), "good", startedCluster(t, fleet.Member("a").Config())); err != nil {
			t.Fatal(err)
		}
		rec.waitFor(t, "good", "cm")
	})
}

// Disengaging a cluster ends everything the controller runs for it: sources waiting to sync,
// sources retrying, and the event handlers on its informers.
func TestDisengageLeavesNothingRunning(t *testing.T) {
	ns := namespace(t, "a")
	createConfigMap(t, "a", ns, "cm")
	clusters := leakTestClusters(t)
	rec := newRecorder(ns)
	c := startController(t, "disengage-"+ns, rec, mccontroller.Options{CacheSyncTimeout: time.Hour})

	// One cycle first: what is created lazily on first use is not a leak.
	engCtx, disengage := context.WithCancel(t.Context())
	engageAll(engCtx, t, c, clusters, "warmup-")
	rec.waitFor(t, "warmup-good", "cm")
	disengage()
	testcheck.WaitFor(t, "the warm-up handlers to be removed", func() bool { return clusters.handlers() == 0 })

	baseline := testcheck.SettledGoroutines()
	engCtx, disengage = context.WithCancel(t.Context())
	defer disengage()
	engageAll(engCtx, t, c, clusters, "")
	rec.waitFor(t, "good", "cm")
	testcheck.WaitFor(t, "the goroutines of the stuck and retrying sources", func() bool {
		return runtime.NumGoroutine() >= baseline+2*len(stuckNames)
	})

	disengage()
	testcheck.WaitFor(t, "the handlers to be removed", func() bool { return clusters.handlers() == 0 })
	testcheck.WaitForGoroutines(t, baseline, 2*time.Minute)
}

// When the controller's context ends, everything it runs for any cluster ends too, although
// the clusters' engagements have not; engaging or watching afterwards fails.
func TestStoppedControllerLeavesNothingRunning(t *testing.T) {
	ns := namespace(t, "a")
	createConfigMap(t, "a", ns, "cm")
	clusters := leakTestClusters(t)
	run := func(name string) {
		rec := newRecorder(ns)
		ctx, stop := context.WithCancel(t.Context())
		c, done := runController(ctx, t, name, rec, mccontroller.Options{CacheSyncTimeout: time.Hour})
		engageAll(t.Context(), t, c, clusters, "")
		rec.waitFor(t, "good", "cm")
		testcheck.WaitFor(t, "the handlers of every engaged cluster", func() bool { return clusters.handlers() == 1+len(stuckNames) })
		stop()
		if err := <-done; err != nil {
			t.Fatalf("controller: %v", err)
		}
		testcheck.WaitFor(t, "the handlers to be removed", func() bool { return clusters.handlers() == 0 })
		if err := c.Engage(t.Context(), "late", clusters.good); err == nil || !strings.Contains(err.Error(), "controller has stopped") {
			t.Fatalf("Engage after stop: %v, want an error saying the controller has stopped", err)
		}
		if err := c.MultiClusterWatch(configMaps()); err == nil {
			t.Fatal("MultiClusterWatch after stop succeeded")
		}
	}
	run("stop-warmup-" + ns)
	baseline := testcheck.SettledGoroutines()
	run("stop-" + ns)
	testcheck.WaitForGoroutines(t, baseline, 2*time.Minute)
}

// The host cluster takes part as an ordinary member under mcmanager.LocalCluster: engaged by
// the manager when it has no provider, or by the controller itself with WithLocalCluster next to
// the provider's clusters. Its requests carry the local name, in the request and in the context,
// and the manager resolves that name to the host.
func TestLocalClusterIsAnOrdinaryMember(t *testing.T) {
	ns := namespace(t, "host", "a")
	createConfigMap(t, "host", ns, "cm")
	createConfigMap(t, "a", ns, "cm")

	t.Run("engaged by the manager", func(t *testing.T) {
		mgr := newManager(t, nil)
		rec := newRecorder(ns)
		rec.mgr = mgr
		newManagedController(t, mgr, "local-by-manager-"+ns, rec)
		runManager(t, mgr)
		rec.waitFor(t, mcmanager.LocalCluster, "cm")
		if got := mgr.EngagedClusters(); len(got) != 1 || got[0] != mcmanager.LocalCluster {
			t.Fatalf("engaged clusters %q, want only the local cluster", got)
		}
	})

	t.Run("engaged by the controller", func(t *testing.T) {
		members := single.New("a", startedCluster(t, fleet.Member("a").Config()), single.Options{AlreadyRunning: true})
		mgr := newManager(t, members)
		rec := newRecorder(ns)
		rec.mgr = mgr
		newManagedController(t, mgr, "local-by-controller-"+ns, rec, mccontroller.WithLocalCluster())
		runManager(t, mgr)
		rec.waitFor(t, mcmanager.LocalCluster, "cm")
		rec.waitFor(t, "a", "cm")
		// The manager engaged only the provider's cluster: the controller engaged the host.
		if got := mgr.EngagedClusters(); len(got) != 1 || got[0] != "a" {
			t.Fatalf("engaged clusters %q, want only a", got)
		}
	})
}

// recorder is a reconciler that records which ConfigMaps of its namespace it reconciled in
// which cluster. With mgr set, it also reads each through the manager's cluster of the request,
// so that a request only counts when its cluster resolves to the right apiserver.
type recorder struct {
	ns  string
	mgr mcmanager.Manager

	mu   sync.Mutex
	seen map[string]bool
	errs []string
}

func newRecorder(ns string) *recorder {
	return &recorder{ns: ns, seen: map[string]bool{}}
}

func (r *recorder) Reconcile(ctx context.Context, req mcreconcile.Request) (mcreconcile.Result, error) {
	if req.Namespace != r.ns {
		return mcreconcile.Result{}, nil
	}
	if name, ok := mccontext.ClusterFrom(ctx); !ok || name != req.ClusterName {
		r.fail("request for cluster %q has cluster %q (set: %v) in its context", req.ClusterName, name, ok)
		return mcreconcile.Result{}, nil
	}
	if r.mgr != nil {
		cl, err := r.mgr.GetCluster(ctx, req.ClusterName)
		if err != nil {
			return mcreconcile.Result{}, err
		}
		if err := cl.GetClient().Get(ctx, req.NamespacedName, &corev1.ConfigMap{}); err != nil {
			return mcreconcile.Result{}, err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen[key(req.ClusterName, req.Name)] = true
	return mcreconcile.Result{}, nil
}

func (r *recorder) fail(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recorder) saw(cluster multicluster.ClusterName, name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen[key(cluster, name)]
}

func (r *recorder) waitFor(t testing.TB, cluster multicluster.ClusterName, name string) {
	t.Helper()
	testcheck.WaitFor(t, fmt.Sprintf("a reconcile of %s/%s in cluster %q", r.ns, name, cluster), func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		if len(r.errs) > 0 {
			t.Fatalf("reconciler: %s", strings.Join(r.errs, "; "))
		}
		return r.seen[key(cluster, name)]
	})
}

func key(cluster multicluster.ClusterName, name string) string { return string(cluster) + "/" + name }

// configMaps watches ConfigMaps in every engaged cluster.
func configMaps() mcsource.Source {
	return mcsource.Kind(&corev1.ConfigMap{}, mchandler.TypedEnqueueRequestForObject[*corev1.ConfigMap]())
}

// newManager returns a manager on the host. Unmanaged controllers only take their defaults
// from it; it runs only when a test runs it.
func newManager(t testing.TB, provider multicluster.Provider) mcmanager.Manager {
	t.Helper()
	mgr, err := mcmanager.New(fleet.Member("host").Config(), provider, mcmanager.Options{
		Logger:                 logr.Discard(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	return mgr
}

// startController runs an unmanaged controller that watches ConfigMaps until the test ends.
func startController(t testing.TB, name string, r mcreconcile.Reconciler, opts mccontroller.Options) mccontroller.Controller {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c, done := runController(ctx, t, name, r, opts)
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("controller %s: %v", name, err)
		}
	})
	return c
}

// runController starts an unmanaged controller that watches ConfigMaps; done receives what its
// Start returns once ctx ends.
func runController(ctx context.Context, t testing.TB, name string, r mcreconcile.Reconciler, opts mccontroller.Options) (mccontroller.Controller, <-chan error) {
	t.Helper()
	opts.Reconciler = r
	c, err := mccontroller.NewUnmanaged(name, newManager(t, nil), opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.MultiClusterWatch(configMaps()); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx) }()
	return c, done
}

// newManagedController adds a controller that watches ConfigMaps to mgr.
func newManagedController(t testing.TB, mgr mcmanager.Manager, name string, r mcreconcile.Reconciler, opts ...mccontroller.Option) {
	t.Helper()
	c, err := mccontroller.New(name, mgr, mccontroller.Options{Reconciler: r}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.MultiClusterWatch(configMaps()); err != nil {
		t.Fatal(err)
	}
}

// runManager runs mgr until the test ends.
func runManager(t testing.TB, mgr mcmanager.Manager) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
}

// countingCluster is a real cluster whose informers count the event handlers registered on
// them and not removed yet: what a controller leaves on a cluster it no longer watches.
type countingCluster struct {
	cluster.Cluster
	cache *countingCache
}

func (c *countingCluster) GetCache() cache.Cache { return c.cache }

func (c *countingCluster) handlers() int { return int(c.cache.handlers.Load()) }

type countingCache struct {
	cache.Cache
	handlers atomic.Int64
}

func (c *countingCache) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	inf, err := c.Cache.GetInformer(ctx, obj, opts...)
	if err != nil {
		return nil, err
	}
	return &countingInformer{Informer: inf, cache: c}, nil
}

type countingInformer struct {
	cache.Informer
	cache *countingCache
}

func (i *countingInformer) AddEventHandlerWithOptions(h toolscache.ResourceEventHandler, opts toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	reg, err := i.Informer.AddEventHandlerWithOptions(h, opts)
	if err == nil {
		i.cache.handlers.Add(1)
	}
	return reg, err
}

func (i *countingInformer) RemoveEventHandler(reg toolscache.ResourceEventHandlerRegistration) error {
	err := i.Informer.RemoveEventHandler(reg)
	if err == nil {
		i.cache.handlers.Add(-1)
	}
	return err
}

// newCountingCluster builds an unstarted cluster for cfg.
func newCountingCluster(t testing.TB, cfg *rest.Config) *countingCluster {
	t.Helper()
	cl, err := cluster.New(cfg, func(o *cluster.Options) { o.Logger = logr.Discard() })
	if err != nil {
		t.Fatal(err)
	}
	return &countingCluster{Cluster: cl, cache: &countingCache{Cache: cl.GetCache()}}
}

// startedCluster builds a cluster for cfg and runs it until the test ends, as a provider would.
func startedCluster(t testing.TB, cfg *rest.Config) *countingCluster {
	t.Helper()
	cl := newCountingCluster(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = cl.Start(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return cl
}

// stuckNames are the names under which the leak tests engage each cluster that never gets
// going; several, so that leftovers add up to more than the noise of other goroutines.
var stuckNames = []string{"1", "2", "3"}

// leakClusters are the clusters of the leak tests, each already running with its informer
// created, so that only what the controller starts for them comes and goes.
type leakClusters struct {
	good      *countingCluster // syncs and reconciles
	neverSync *countingCluster // may not list ConfigMaps: its source waits for a sync
	down      *countingCluster // its apiserver is stopped: its source keeps retrying
}

func leakTestClusters(t testing.TB) *leakClusters {
	t.Helper()
	stopMember(t, fleet.Member("flaky"))
	c := &leakClusters{
		good:      startedCluster(t, fleet.Member("a").Config()),
		neverSync: startedCluster(t, forbiddenConfig(t, "b")),
		down:      newCountingCluster(t, fleet.Member("flaky").Config()),
	}
	for _, cl := range []*countingCluster{c.good, c.neverSync} {
		if _, err := cl.GetCache().GetInformer(t.Context(), &corev1.ConfigMap{}, cache.BlockUntilSynced(false)); err != nil {
			t.Fatal(err)
		}
	}
	if !c.good.GetCache().WaitForCacheSync(t.Context()) {
		t.Fatal("cache of a did not sync")
	}
	return c
}

func (c *leakClusters) handlers() int {
	return c.good.handlers() + c.neverSync.handlers() + c.down.handlers()
}

// engageAll engages the good cluster as prefix+"good", and the others under prefixed
// stuckNames.
func engageAll(ctx context.Context, t testing.TB, c mccontroller.Controller, clusters *leakClusters, prefix string) {
	t.Helper()
	engage := func(name string, cl cluster.Cluster) {
		if err := c.Engage(ctx, multicluster.ClusterName(prefix+name), cl); err != nil {
			t.Fatal(err)
		}
	}
	engage("good", clusters.good)
	for _, n := range stuckNames {
		engage("never-sync-"+n, clusters.neverSync)
		engage("down-"+n, clusters.down)
	}
}

// forbiddenConfig returns credentials for member that authenticate but may not read anything:
// a cache built on them never syncs.
func forbiddenConfig(t testing.TB, member string) *rest.Config {
	t.Helper()
	kubeconfig, err := fleet.Member(member).ServiceAccountKubeconfig(t.Context(), envtest.ServiceAccountOptions{
		Name:         "forbidden",
		ClusterRules: []rbacv1.PolicyRule{},
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// stopMember stops m, if it runs, until the test ends.
func stopMember(t testing.TB, m *envtest.Member) {
	t.Helper()
	if m.Running() {
		if err := m.Stop(); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		if !m.Running() {
			if err := m.Start(context.Background()); err != nil {
				t.Errorf("restarting %s: %v", m.Name(), err)
			}
		}
	})
}

// sourceErrors reads the controller's count of per-cluster source failures.
func sourceErrors(t testing.TB, controller string) float64 {
	t.Helper()
	var m dto.Metric
	if err := metrics.ClusterSourceErrors.WithLabelValues(controller).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// logged reports whether one line of logs contains every part.
func logged(logs *providertest.LogBuffer, parts ...string) bool {
	_, err := logs.Find(parts...)
	return err == nil
}

func notLogged(logs *providertest.LogBuffer, parts ...string) bool { return !logged(logs, parts...) }

// namespace creates a fresh namespace of the same name in the named members.
func namespace(t testing.TB, members ...string) string {
	t.Helper()
	return envtest.NamespaceForTest(t, "ctrl", fleet.MembersForTest(t, members...)...)
}

// memberClient is a direct client to a member.
func memberClient(t testing.TB, member string) client.Client {
	t.Helper()
	return fleet.Member(member).ClientForTest(t, client.Options{})
}

func createConfigMap(t testing.TB, member, ns, name string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := memberClient(t, member).Create(t.Context(), cm); err != nil {
		t.Fatalf("creating ConfigMap %s in %s: %v", types.NamespacedName{Namespace: ns, Name: name}, member, err)
	}
}
