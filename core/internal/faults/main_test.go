// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package faults

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"mcr.dev/core/envtest"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
	mcreconcile "mcr.dev/core/reconcile"
)

// fleet is shared by the tests of the package. "host" runs the managers; "a" and "b" are
// members that stay up; "c" is the member the outage test stops and starts.
var fleet *envtest.Fleet

func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard())
	// Informers of members that are down log every retry through klog.
	klog.SetLogger(logr.Discard())
	envtest.Main(m, envtest.Options{Members: []string{"host", "a", "b", "c"}}, func(f *envtest.Fleet) error {
		fleet = f
		return nil
	})
}

// cacheSyncTimeout is the controllers' and the provider's CacheSyncTimeout in these tests: an
// outage longer than it is one no sync wait covers.
const cacheSyncTimeout = 10 * time.Second

// newManager returns a manager on the host with provider, logging to log.
func newManager(t testing.TB, provider multicluster.Provider, log logr.Logger) mcmanager.Manager {
	t.Helper()
	mgr, err := mcmanager.New(fleet.Member("host").Config(), provider, mcmanager.Options{
		Logger:                 log,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller: config.Controller{
			SkipNameValidation: ptr.To(true),
			CacheSyncTimeout:   cacheSyncTimeout,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return mgr
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

// logLines collects the lines of a logger that contain any of the given words.
type logLines struct {
	words []string

	mu    sync.Mutex
	lines []string
}

func (l *logLines) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		line := prefix + " " + args
		if slices.ContainsFunc(l.words, func(w string) bool { return strings.Contains(line, w) }) {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.lines = append(l.lines, line)
		}
	}, funcr.Options{})
}

func (l *logLines) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.lines)
}

// gone is the version the ledger records for a deleted object.
const gone = math.MaxInt

// ledger is the book of a test: every write to a ConfigMap of the test's namespace, with the
// version it wrote (data "v", counting up per object; gone for a delete), and every version the
// reconciler read back through the manager's cluster of the request.
type ledger struct {
	ns string

	mu      sync.Mutex
	objects map[string]*objectLog // by cluster/name
}

type objectLog struct {
	cluster string
	name    string
	writes  []stamp
	seen    []stamp
}

type stamp struct {
	version int
	at      time.Time
}

func newLedger(ns string) *ledger {
	return &ledger{ns: ns, objects: map[string]*objectLog{}}
}

func (l *ledger) object(cluster, name string) *objectLog {
	k := cluster + "/" + name
	o, ok := l.objects[k]
	if !ok {
		o = &objectLog{cluster: cluster, name: name}
		l.objects[k] = o
	}
	return o
}

func (l *ledger) wrote(cluster, name string, version int, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	o := l.object(cluster, name)
	o.writes = append(o.writes, stamp{version, at})
}

func (l *ledger) saw(cluster, name string, version int) {
	at := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	o := l.object(cluster, name)
	o.seen = append(o.seen, stamp{version, at})
}

// reconciler records, for every request of the ledger's namespace, the version its cluster's
// cached client returns: the reconciler sees what a real one would.
func (l *ledger) reconciler(mgr mcmanager.Manager) mcreconcile.Reconciler {
	return mcreconcile.Func(func(ctx context.Context, req mcreconcile.Request) (reconcile.Result, error) {
		if req.Namespace != l.ns {
			return reconcile.Result{}, nil
		}
		cl, err := mgr.GetCluster(ctx, req.ClusterName)
		if err != nil {
			return reconcile.Result{}, err
		}
		var cm corev1.ConfigMap
		err = cl.GetClient().Get(ctx, req.NamespacedName, &cm)
		switch {
		case apierrors.IsNotFound(err):
			l.saw(string(req.ClusterName), req.Name, gone)
		case err != nil:
			return reconcile.Result{}, err
		default:
			v, err := strconv.Atoi(cm.Data["v"])
			if err != nil {
				return reconcile.Result{}, fmt.Errorf("ConfigMap %s has no version: %w", req.NamespacedName, err)
			}
			l.saw(string(req.ClusterName), req.Name, v)
		}
		return reconcile.Result{}, nil
	})
}

// latency is how long after a write's response the reconciler first read that version or a
// later one (0 when it read it before the writer got the response); ok is false while it has
// not. Versions only grow, so the first such read is the write's.
func (o *objectLog) latency(w stamp) (time.Duration, bool) {
	for _, s := range o.seen {
		if s.version >= w.version {
			return max(0, s.at.Sub(w.at)), true
		}
	}
	return 0, false
}

// writeFilter selects writes by cluster and time.
type writeFilter func(cluster string, at time.Time) bool

// lost returns the objects, among those with a write selected by f, whose last write the
// reconciler has not read back (yet).
func (l *ledger) lost(f writeFilter) (lost []string, counted int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, o := range l.objects {
		selected := false
		for _, w := range o.writes {
			if f(o.cluster, w.at) {
				selected = true
			}
		}
		if !selected {
			continue
		}
		counted++
		if _, ok := o.latency(o.writes[len(o.writes)-1]); !ok {
			lost = append(lost, o.cluster+"/"+o.name)
		}
	}
	sort.Strings(lost)
	return lost, counted
}

// latencies returns the latency of every write selected by f that has been read back.
func (l *ledger) latencies(f writeFilter) []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []time.Duration
	for _, o := range l.objects {
		for _, w := range o.writes {
			if !f(o.cluster, w.at) {
				continue
			}
			if d, ok := o.latency(w); ok {
				out = append(out, d)
			}
		}
	}
	slices.Sort(out)
	return out
}

// summary formats latencies as count, median, 95th percentile and maximum.
func summary(ds []time.Duration) string {
	if len(ds) == 0 {
		return "no writes"
	}
	pick := func(q float64) time.Duration { return ds[int(q*float64(len(ds)-1))] }
	return fmt.Sprintf("n=%d median=%s p95=%s max=%s", len(ds),
		pick(0.5).Round(time.Millisecond), pick(0.95).Round(time.Millisecond), ds[len(ds)-1].Round(time.Millisecond))
}

// writer writes ConfigMaps in one member's namespace and books every write in the ledger.
type writer struct {
	t       testing.TB
	cluster string
	c       client.Client
	l       *ledger

	mu      sync.Mutex     // a test may write next to churn
	next    int            // suffix of the next new object
	live    []string       // objects that exist, in creation order
	version map[string]int // last version written per object
}

func newWriter(t testing.TB, l *ledger, cluster string) *writer {
	t.Helper()
	c := fleet.Member(cluster).ClientForTest(t, client.Options{})
	return &writer{t: t, cluster: cluster, c: c, l: l, version: map[string]int{}}
}

func (w *writer) data(name string) map[string]string {
	return map[string]string{"v": strconv.Itoa(w.version[name])}
}

// create creates a new object at version 1.
func (w *writer) create(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	name := fmt.Sprintf("%s-%d", w.cluster, w.next)
	w.next++
	w.version[name] = 1
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.l.ns, Name: name}, Data: w.data(name)}
	if err := w.c.Create(ctx, cm); err != nil {
		return fmt.Errorf("creating %s in %s: %w", name, w.cluster, err)
	}
	w.l.wrote(w.cluster, name, 1, time.Now())
	w.live = append(w.live, name)
	return nil
}

// update writes the next version of the i-th live object.
func (w *writer) update(ctx context.Context, i int) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	name := w.live[i%len(w.live)]
	w.version[name]++
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.l.ns, Name: name}, Data: w.data(name)}
	if err := w.c.Update(ctx, cm); err != nil {
		return fmt.Errorf("updating %s in %s: %w", name, w.cluster, err)
	}
	w.l.wrote(w.cluster, name, w.version[name], time.Now())
	return nil
}

// remove deletes the oldest live object.
func (w *writer) remove(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	name := w.live[0]
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.l.ns, Name: name}}
	if err := w.c.Delete(ctx, cm); err != nil {
		return fmt.Errorf("deleting %s in %s: %w", name, w.cluster, err)
	}
	w.l.wrote(w.cluster, name, gone, time.Now())
	w.live = w.live[1:]
	return nil
}

// count returns the number of live objects.
func (w *writer) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.live)
}

// churn creates, updates and deletes objects, one operation every interval, until ctx ends:
// two creates, two updates and a delete in every five operations.
func (w *writer) churn(ctx context.Context, interval time.Duration) error {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for op := 0; ; op++ {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
		var err error
		switch {
		case op%5 == 4 && w.count() > 3:
			err = w.remove(ctx)
		case op%5 >= 2 && w.count() > 0:
			err = w.update(ctx, op)
		default:
			err = w.create(ctx)
		}
		if err != nil && ctx.Err() == nil {
			return err
		}
	}
}

// createNamespace creates ns in the given members.
func createNamespace(t testing.TB, ns string, members ...string) {
	t.Helper()
	for _, m := range members {
		c := fleet.Member(m).ClientForTest(t, client.Options{})
		if err := c.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatalf("creating namespace %s in %s: %v", ns, m, err)
		}
	}
}

// uniqueName returns a name unique to this test run.
func uniqueName(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano()%1_000_000)
}

// firstLines returns at most n of lines, joined.
func firstLines(lines []string, n int) string {
	if len(lines) > n {
		return strings.Join(lines[:n], ", ") + fmt.Sprintf(", … (%d more)", len(lines)-n)
	}
	return strings.Join(lines, ", ")
}
