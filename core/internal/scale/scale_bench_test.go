// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package scale

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	mcbuilder "mcr.dev/core/builder"
	mcclusters "mcr.dev/core/clusters"
	"mcr.dev/core/envtest"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/clusters"
	mcreconcile "mcr.dev/core/reconcile"
	"mcr.dev/core/restmapper"
)

// scaleAPIServers is how many kube-apiservers BenchmarkScale spreads its clusters over: enough
// that no single one serves all the watches, few enough for a 2-core machine (each takes about
// 260 MiB).
const scaleAPIServers = 4

// BenchmarkScale engages N clusters with one controller watching ConfigMaps and reports what it
// costs the process and how long engaging and disengaging take (see runScale for every metric).
// Each cluster is a cluster.Cluster of its own, with its own ServiceAccount token, restricted by
// RBAC and by its cache options to one namespace holding one ConfigMap; the N clusters are
// spread over scaleAPIServers apiservers. Each size runs twice: mappers=own gives every cluster a
// REST mapper of its own (controller-runtime's default, restmapper.Own), mappers=shared builds
// the clusters as a kit provider builds its members by default (clusters.Defaults, so that the
// clusters of one apiserver share restmapper.Default's mapper). Run one size with
// -bench 'BenchmarkScale/mappers=own/N=100$'; N=10000 takes about 10 minutes and 3 GiB.
//
// MCR_SCALE_IDLE sets the idle window over which CPU is measured (a Go duration, default 30s;
// 0 skips it); MCR_SCALE_PROFILES names a directory that receives a goroutine and a heap
// profile taken while every cluster is engaged.
func BenchmarkScale(b *testing.B) {
	idle := 30 * time.Second
	if v := os.Getenv("MCR_SCALE_IDLE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.Fatalf("MCR_SCALE_IDLE: %v", err)
		}
		idle = d
	}
	for _, mappers := range []string{"own", "shared"} {
		b.Run("mappers="+mappers, func(b *testing.B) {
			for _, n := range []int{10, 100, 300, 1000, 10000} {
				b.Run("N="+strconv.Itoa(n), func(b *testing.B) {
					began := time.Now()
					members := apiservers(b, scaleAPIServers)
					creds := mintClusterCredentials(b, members, n)
					var sum scaleResult
					for i := range b.N {
						sum.add(runScale(b, creds, scaleOptions{
							run: i, idle: idle, sharedMappers: mappers == "shared",
							profileDir: os.Getenv("MCR_SCALE_PROFILES"),
						}))
					}
					sum.report(b, float64(b.N))
					// The whole sub-benchmark: apiservers and credentials too, when not already there.
					b.ReportMetric(time.Since(began).Seconds(), "wall-s")
				})
			}
		})
	}
}

// TestScaleHarness runs BenchmarkScale's scenario on a few clusters of one apiserver, so that
// the harness is exercised (under -race) by every test run, and checks what the benchmark
// takes for granted: every cluster has credentials of its own that reach only its namespace.
func TestScaleHarness(t *testing.T) {
	members := apiservers(t, 1)
	creds := mintClusterCredentials(t, members, 3)
	for i, c := range creds {
		cfg := c.restConfig(t)
		cl, err := client.New(cfg, client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var own corev1.ConfigMapList
		if err := cl.List(t.Context(), &own, client.InNamespace(c.namespace)); err != nil || len(own.Items) != 1 {
			t.Errorf("cluster %d: listing its own namespace: %d items, err %v; want 1 item", i, len(own.Items), err)
		}
		other := creds[(i+1)%len(creds)].namespace
		if err := cl.List(t.Context(), &corev1.ConfigMapList{}, client.InNamespace(other)); !apierrors.IsForbidden(err) {
			t.Errorf("cluster %d: listing namespace %s: err %v, want forbidden", i, other, err)
		}
		if err := cl.List(t.Context(), &corev1.ConfigMapList{}); !apierrors.IsForbidden(err) {
			t.Errorf("cluster %d: listing every namespace: err %v, want forbidden", i, err)
		}
	}
	for i, shared := range []bool{false, true} {
		r := runScale(t, creds, scaleOptions{run: i, idle: 200 * time.Millisecond, sharedMappers: shared})
		if r.allReconciled <= 0 || r.disengage <= 0 {
			t.Errorf("shared mappers %v: engage or disengage not timed: %+v", shared, r)
		}
		if r.goroutinesPerCluster <= 0 || r.tcpConns <= 0 {
			t.Errorf("shared mappers %v: engaged clusters cost no goroutines or no connections: %+v", shared, r)
		}
	}
}

// clusterCredentials are what a provider would hand out for one member cluster: an endpoint, a
// ServiceAccount token, and the namespace the token may use.
type clusterCredentials struct {
	member     *envtest.Member
	namespace  string
	kubeconfig []byte
}

func (c clusterCredentials) restConfig(tb testing.TB) *rest.Config {
	tb.Helper()
	cfg, err := clientcmd.RESTConfigFromKubeConfig(c.kubeconfig)
	if err != nil {
		tb.Fatalf("kubeconfig of %s/%s: %v", c.member.Name(), c.namespace, err)
	}
	return cfg
}

// minted keeps credentials across sub-benchmarks: the 300 of N=300 are the first 300 of N=1000.
var (
	mintedMu sync.Mutex
	minted   = map[string]clusterCredentials{} // by member/namespace
)

// mintClusterCredentials returns credentials for n clusters, cluster i on members[i %
// len(members)] in namespace scale-<i>: a ServiceAccount there, allowed by a Role to read and
// patch the ConfigMaps of that namespace and nothing else, and one ConfigMap, "cm".
func mintClusterCredentials(tb testing.TB, members []*envtest.Member, n int) []clusterCredentials {
	tb.Helper()
	mintedMu.Lock()
	defer mintedMu.Unlock()
	creds := make([]clusterCredentials, n)
	errs := make([]error, n)
	admins := make([]client.Client, len(members))
	closers := make([]func(), len(members))
	for i, m := range members {
		admins[i], closers[i] = adminClient(tb, m)
	}
	defer func() {
		for _, closeIdle := range closers {
			closeIdle()
		}
	}()
	// A few at a time: every mint is seven requests on a fresh TLS connection.
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i := range n {
		m := members[i%len(members)]
		ns := fmt.Sprintf("scale-%d", i)
		if c, ok := minted[m.Name()+"/"+ns]; ok {
			creds[i] = c
			continue
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			kubeconfig, err := m.ServiceAccountKubeconfig(context.Background(), envtest.ServiceAccountOptions{
				Namespace:    ns,
				Name:         "scale",
				ClusterRules: []rbacv1.PolicyRule{},
				Rules: []rbacv1.PolicyRule{{
					APIGroups: []string{""},
					Resources: []string{"configmaps"},
					Verbs:     []string{"get", "list", "watch", "patch"},
				}},
				// Long enough for every size of one `make bench-scale` run.
				TokenExpiration: 12 * time.Hour,
			})
			if err == nil {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm"}}
				if err = admins[i%len(members)].Create(context.Background(), cm); apierrors.IsAlreadyExists(err) {
					err = nil
				}
			}
			if err != nil {
				errs[i] = fmt.Errorf("cluster %d on %s: %w", i, m.Name(), err)
				return
			}
			creds[i] = clusterCredentials{member: m, namespace: ns, kubeconfig: kubeconfig}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		tb.Fatal(err)
	}
	for _, c := range creds {
		minted[c.member.Name()+"/"+c.namespace] = c
	}
	return creds
}

type scaleOptions struct {
	run        int           // distinguishes the cluster names of successive runs
	idle       time.Duration // window over which idle CPU is measured; 0 skips it
	profileDir string        // receives goroutine and heap profiles while engaged; "" for none
	// sharedMappers builds the clusters under the zero clusters.Defaults, as a kit provider
	// builds its members (REST mappers shared per endpoint); false gives each its own.
	sharedMappers bool
}

// scaleResult is one run of runScale. Per-cluster memory and goroutines are deltas over the
// baseline (the manager running with its controller and provider, no cluster engaged) divided by
// N; connections are counted whole, since pooled connections may predate the baseline.
type scaleResult struct {
	allReconciled        time.Duration // first Add → every cluster's ConfigMap reconciled once
	rssPerCluster        float64       // MiB
	heapPerCluster       float64       // MiB
	goroutinesPerCluster float64
	tcpPerCluster        float64
	tcpConns             float64       // TCP connections of the process while engaged
	idleCPUPerCluster    time.Duration // CPU time per cluster per minute of idling
	disengage            time.Duration // first Remove → goroutines back to the baseline
	leftGoroutines       int           // over the baseline when disengage was taken (see runScale)
	apiserverRSS         float64       // MiB, all apiservers of the fleet while engaged
}

func (s *scaleResult) add(r scaleResult) {
	s.allReconciled += r.allReconciled
	s.rssPerCluster += r.rssPerCluster
	s.heapPerCluster += r.heapPerCluster
	s.goroutinesPerCluster += r.goroutinesPerCluster
	s.tcpPerCluster += r.tcpPerCluster
	s.tcpConns += r.tcpConns
	s.idleCPUPerCluster += r.idleCPUPerCluster
	s.disengage += r.disengage
	s.leftGoroutines += r.leftGoroutines
	s.apiserverRSS += r.apiserverRSS
}

func (s *scaleResult) report(b *testing.B, runs float64) {
	b.ReportMetric(s.allReconciled.Seconds()/runs, "all-reconciled-s")
	b.ReportMetric(s.rssPerCluster/runs, "rss-MiB/cluster")
	b.ReportMetric(s.heapPerCluster/runs, "heap-MiB/cluster")
	b.ReportMetric(s.goroutinesPerCluster/runs, "goroutines/cluster")
	b.ReportMetric(s.tcpPerCluster/runs, "tcp-conns/cluster")
	b.ReportMetric(s.tcpConns/runs, "tcp-conns")
	b.ReportMetric(float64(s.idleCPUPerCluster.Microseconds())/1000/runs, "idle-cpu-ms/cluster/min")
	b.ReportMetric(s.disengage.Seconds()/runs, "disengage-s")
	b.ReportMetric(float64(s.leftGoroutines)/runs, "left-goroutines")
	b.ReportMetric(s.apiserverRSS/runs, "apiserver-RSS-MiB")
	b.ReportMetric(0, "ns/op")
}

// scaleCacheSyncTimeout replaces the provider's one-minute default: a thousand caches syncing at
// once on two shared cores can take longer, and a timeout would fail the run rather than time it.
const scaleCacheSyncTimeout = 10 * time.Minute

// reconciles is what the benchmarks' controller of ConfigMaps counts: every reconcile, and
// each of the n clusters named <prefix><i> whose "cm" was reconciled once; all is closed when
// every one was.
type reconciles struct {
	total, first atomic.Int64
	seen         []atomic.Bool
	all          chan struct{}
}

// runFleetController starts a manager on cfg (whose local cluster is not engaged) with provider
// and one controller of ConfigMaps that counts into the returned reconciles; stop ends it.
func runFleetController(tb testing.TB, cfg *rest.Config, provider multicluster.Provider, prefix string, n int) (mcmanager.Manager, *reconciles, func()) {
	tb.Helper()
	skip := true
	mgr, err := mcmanager.New(cfg, provider, mcmanager.Options{
		Logger:                 logr.Discard(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: &skip},
	})
	if err != nil {
		tb.Fatalf("creating manager: %v", err)
	}
	r := &reconciles{seen: make([]atomic.Bool, n), all: make(chan struct{})}
	err = mcbuilder.ControllerManagedBy(mgr).Named(strings.TrimSuffix(prefix, "-")).For(&corev1.ConfigMap{}).
		Complete(mcreconcile.Func(func(_ context.Context, req mcreconcile.Request) (reconcile.Result, error) {
			r.total.Add(1)
			i, err := strconv.Atoi(strings.TrimPrefix(string(req.ClusterName), prefix))
			if err == nil && i < n && req.Name == "cm" && !r.seen[i].Swap(true) && r.first.Add(1) == int64(n) {
				close(r.all)
			}
			return reconcile.Result{}, nil
		}))
	if err != nil {
		tb.Fatalf("building the controller: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- mgr.Start(ctx) }()
	return mgr, r, func() {
		cancel()
		if err := <-stopped; err != nil {
			tb.Errorf("manager: %v", err)
		}
	}
}

// runScale starts a manager (on the first member, whose local cluster is not engaged) with a
// clusters provider and one controller of ConfigMaps, takes a baseline, engages one cluster per
// credential at once, and measures:
//   - allReconciled: from the first Add until every cluster's ConfigMap was reconciled once;
//   - RSS, heap and goroutines once settled, over the baseline, and the TCP connections;
//   - idle CPU: process CPU time over opts.idle with every cluster engaged, minus the same
//     window measured at the baseline, per cluster and scaled to a minute;
//   - disengage: from the first Remove until no cluster is engaged and the goroutines are back
//     at the baseline, give or take two per TCP connection still open: client-go pools HTTP/2
//     connections per apiserver, shared by every cluster on it, and closes them only after 90 s
//     idle; leftGoroutines is what remained over the baseline then, those readers included.
func runScale(tb testing.TB, creds []clusterCredentials, opts scaleOptions) scaleResult {
	tb.Helper()
	n := len(creds)
	provider := clusters.New(clusters.Options{CacheSyncTimeout: scaleCacheSyncTimeout, Logger: logr.Discard()})
	// Names are scale-<run>-<i>.
	prefix := fmt.Sprintf("scale-%d-", opts.run)
	mgr, counted, stop := runFleetController(tb, creds[0].member.Config(), provider, prefix, n)
	defer stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// Cluster objects are built before the baseline (they are part of what a cluster costs) but
	// before the clock starts (building one does no I/O).
	time.Sleep(time.Second) // let the manager's own start-up goroutines come and go
	base := sampleProcess(tb)
	var baseIdleCPU time.Duration
	if opts.idle > 0 {
		start := cpuTime()
		time.Sleep(opts.idle)
		baseIdleCPU = cpuTime() - start
	}
	names := make([]multicluster.ClusterName, n)
	cls := make([]cluster.Cluster, n)
	var err error
	mappers := cluster.Option(restmapper.Own)
	if opts.sharedMappers {
		mappers = mcclusters.Defaults{}.ClusterOption()
	}
	for i, c := range creds {
		names[i] = multicluster.ClusterName(prefix + strconv.Itoa(i))
		ns := c.namespace
		cls[i], err = cluster.New(c.restConfig(tb), func(o *cluster.Options) {
			mappers(o)
			o.Logger = logr.Discard()
			// One namespace per cache: the token could not list more, and a cache of every
			// ConfigMap of the apiserver per cluster would grow with N².
			o.Cache.DefaultNamespaces = map[string]cache.Config{ns: {}}
		})
		if err != nil {
			tb.Fatalf("creating cluster %d: %v", i, err)
		}
	}

	var r scaleResult
	start := time.Now()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = provider.Add(ctx, names[i], cls[i]) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		tb.Fatalf("engaging: %v", err)
	}
	select {
	case <-counted.all:
	case <-time.After(scaleCacheSyncTimeout):
		tb.Fatalf("only %d of %d clusters reconciled after %s", counted.first.Load(), n, scaleCacheSyncTimeout)
	}
	r.allReconciled = time.Since(start)

	time.Sleep(time.Second) // the engage goroutines end, the first reconciles' garbage is collectable
	engaged := sampleProcess(tb)
	mib := func(bytes int64) float64 { return float64(bytes) / (1 << 20) }
	r.rssPerCluster = mib(engaged.rss-base.rss) / float64(n)
	r.heapPerCluster = mib(engaged.heapInuse-base.heapInuse) / float64(n)
	r.goroutinesPerCluster = float64(engaged.goroutines-base.goroutines) / float64(n)
	r.tcpConns = float64(engaged.tcp)
	r.tcpPerCluster = r.tcpConns / float64(n)
	r.apiserverRSS = mib(childRSS("kube-apiserver"))
	if opts.profileDir != "" {
		name := strconv.Itoa(n)
		if opts.sharedMappers {
			name += "-shared-mappers"
		}
		writeProfiles(tb, opts.profileDir, name)
	}
	if opts.idle > 0 {
		start := cpuTime()
		time.Sleep(opts.idle)
		used := cpuTime() - start - baseIdleCPU
		r.idleCPUPerCluster = time.Duration(float64(used) / float64(n) * float64(time.Minute) / float64(opts.idle))
	}

	start = time.Now()
	for _, name := range names {
		wg.Go(func() { provider.Remove(name) })
	}
	wg.Wait()
	deadline := start.Add(5 * time.Minute)
	for {
		tcp, err := tcpConnections()
		if err != nil {
			tb.Fatal(err)
		}
		allowance := 2 * max(tcp-base.tcp, 0)
		over := runtime.NumGoroutine() - base.goroutines
		if len(mgr.EngagedClusters()) == 0 && over <= allowance {
			r.disengage = time.Since(start)
			r.leftGoroutines = max(over, 0)
			break
		}
		if time.Now().After(deadline) {
			tb.Fatalf("5 minutes after disengaging: %d clusters engaged, %d goroutines over the baseline (allowance %d)",
				len(mgr.EngagedClusters()), over, allowance)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return r
}

// writeProfiles writes the goroutines (grouped by stack, as text) and the heap (after a GC) of
// the engaged process into dir, named after the size.
func writeProfiles(tb testing.TB, dir, name string) {
	tb.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	for _, p := range []struct {
		name, file string
		debug      int
	}{
		{"goroutine", "scale-" + name + "-goroutines.txt", 1},
		{"heap", "scale-" + name + "-heap.pprof", 0},
	} {
		f, err := os.Create(filepath.Join(dir, p.file))
		if err != nil {
			tb.Fatal(err)
		}
		err = pprof.Lookup(p.name).WriteTo(f, p.debug)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			tb.Fatalf("writing %s: %v", p.file, err)
		}
	}
}
