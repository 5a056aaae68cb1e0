// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package scale

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
)

// BenchmarkRotation engages N clusters through a provider on the provider kit, each with a
// ServiceAccount token of its own (the clusters of BenchmarkScale), then gives every member a
// new token of the same ServiceAccount at once and reports what the rotation costs: list
// requests (LIST, or WATCH with the initial objects) the member apiservers served, reconciles it triggered, the time until every member
// works with its new token, how long members ran on a cold cache, and the process's CPU time.
// refresh=engage is what the kit does without Options.RefreshCredentialsInPlace (a new
// cluster per member), refresh=inplace with it. Run one with
// -bench 'BenchmarkRotation/refresh=inplace/N=100$'.
func BenchmarkRotation(b *testing.B) {
	for _, refresh := range []string{"engage", "inplace"} {
		b.Run("refresh="+refresh, func(b *testing.B) {
			for _, n := range []int{100, 1000} {
				b.Run("N="+strconv.Itoa(n), func(b *testing.B) {
					members := apiservers(b, scaleAPIServers)
					creds := mintClusterCredentials(b, members, n)
					var sum rotationResult
					for i := range b.N {
						sum.add(runRotation(b, creds, i, refresh == "inplace"))
					}
					sum.report(b, float64(b.N))
				})
			}
		})
	}
}

// TestRotationHarness runs BenchmarkRotation's scenario on a few clusters of one apiserver in
// both variants and checks what tells them apart: re-engaging relists and reconciles every
// member again, refreshing in place does neither.
func TestRotationHarness(t *testing.T) {
	members := apiservers(t, 1)
	creds := mintClusterCredentials(t, members, 3)
	engage := runRotation(t, creds, 0, false)
	if engage.lists < 3 || engage.reconciles < 3 || engage.coldCache <= 0 {
		t.Errorf("re-engaging 3 members: %+v; want at least 3 list requests and 3 reconciles, and a cold cache", engage)
	}
	inPlace := runRotation(t, creds, 1, true)
	if inPlace.lists != 0 || inPlace.reconciles != 0 || inPlace.coldCache != 0 {
		t.Errorf("refreshing 3 members in place: %+v; want no list request, no reconcile, no cold cache", inPlace)
	}
	t.Logf("re-engaged: %+v; refreshed in place: %+v", engage, inPlace)
	if inPlace.rotated <= 0 || engage.rotated <= 0 {
		t.Errorf("rotation not timed: engage %+v, in place %+v", engage, inPlace)
	}
}

// rotationResult is one run of runRotation.
type rotationResult struct {
	rotated    time.Duration // new tokens handed out → every member rotated (its Event recorded)
	coldCache  time.Duration // summed over members: time their new cluster's cache was not synced
	lists      float64       // LIST and WATCH requests for ConfigMaps the member apiservers served meanwhile
	reconciles float64       // reconciles the rotation triggered
	cpu        time.Duration // CPU time of the process from the rotation until it settled
	n          int
}

func (s *rotationResult) add(r rotationResult) {
	s.rotated += r.rotated
	s.coldCache += r.coldCache
	s.lists += r.lists
	s.reconciles += r.reconciles
	s.cpu += r.cpu
	s.n = r.n
}

func (s *rotationResult) report(b *testing.B, runs float64) {
	b.ReportMetric(s.rotated.Seconds()/runs, "all-rotated-s")
	b.ReportMetric(s.coldCache.Seconds()/runs/float64(s.n), "cold-cache-s/cluster")
	b.ReportMetric(s.lists/runs, "list-requests")
	b.ReportMetric(s.reconciles/runs, "reconciles")
	b.ReportMetric(float64(s.cpu.Milliseconds())/runs, "cpu-ms")
	b.ReportMetric(0, "ns/op")
}

// rotationProvider is the smallest provider on the kit: the desired config of each member, by
// name, and a ConfigMap per member that its Events name.
type rotationProvider struct {
	kit.Members[string]
	engine  *kit.Engine[string]
	desired kit.Desired[string, *rest.Config]
	// namespaces maps each token to the one namespace it may read, which its member's cache
	// is limited to (see tagNamespace and newCache).
	namespaces sync.Map
}

// namespaceAgent prefixes the user agent that carries a member's namespace from its config to
// its cache.
const namespaceAgent = "mcr-rotation-benchmark/"

// tagNamespace, a RESTOption, writes the namespace the member's token may read into its user
// agent: a kit provider's cluster options are the same for every member, and the config the
// cache constructor sees holds no token when the credentials are refreshed in place.
func (p *rotationProvider) tagNamespace(cfg *rest.Config) error {
	ns, ok := p.namespaces.Load(cfg.BearerToken)
	if !ok {
		return errors.New("a token the benchmark did not mint")
	}
	cfg.UserAgent = namespaceAgent + ns.(string)
	return nil
}

// newCache builds a member's cache over the one namespace its token may read, as BenchmarkScale
// does per cluster.
func (p *rotationProvider) newCache(cfg *rest.Config, opts cache.Options) (cache.Cache, error) {
	ns, ok := strings.CutPrefix(cfg.UserAgent, namespaceAgent)
	if !ok {
		return nil, fmt.Errorf("user agent %q names no namespace", cfg.UserAgent)
	}
	opts.DefaultNamespaces = map[string]cache.Config{ns: {}}
	return cache.New(cfg, opts)
}

func (p *rotationProvider) sync(ctx context.Context, name string) kit.Result {
	cfg, ok := p.desired.Get(name)
	if !ok {
		p.engine.Disengage(multicluster.ClusterName(name), nil, "it is no longer desired")
		return kit.Result{}
	}
	return p.engine.Engage(ctx, name, kit.Member{
		Name:      multicluster.ClusterName(name),
		Config:    cfg,
		Regarding: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: name}},
		From:      "the benchmark",
	})
}

// rotations notes when each member's first CredentialsRotated Event came.
type rotations struct {
	mu   sync.Mutex
	at   map[string]time.Time
	all  chan struct{}
	want int
}

func (r *rotations) Eventf(regarding, _ runtime.Object, _, reason, _, _ string, _ ...any) {
	if reason != kit.ReasonCredentialsRotated {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	name := regarding.(metav1.Object).GetName()
	if _, ok := r.at[name]; !ok {
		r.at[name] = time.Now()
	}
	if len(r.at) == r.want {
		select {
		case <-r.all:
		default:
			close(r.all)
		}
	}
}

// runRotation engages one member per credential through a rotationProvider, waits until each
// was reconciled once, mints a second token for every member's ServiceAccount, hands them all
// to the provider at once, and measures until every member has rotated and no reconcile came
// for a second.
func runRotation(tb testing.TB, creds []clusterCredentials, run int, inPlace bool) rotationResult {
	tb.Helper()
	n := len(creds)
	events := &rotations{at: map[string]time.Time{}, all: make(chan struct{}), want: n}
	p := &rotationProvider{}
	engine, err := p.Init(kit.EngineOptions[string]{
		Name: "rotation-provider",
		Options: kit.Options{
			Logger:                    logr.Discard(),
			EventRecorder:             events,
			CacheSyncTimeout:          scaleCacheSyncTimeout,
			RefreshCredentialsInPlace: ptr.To(inPlace),
			RESTOptions:               []func(*rest.Config) error{p.tagNamespace},
			ClusterOptions: []cluster.Option{func(o *cluster.Options) {
				o.Logger = logr.Discard()
				o.NewCache = p.newCache
			}},
		},
		Sync: p.sync,
	})
	if err != nil {
		tb.Fatal(err)
	}
	p.engine = engine

	prefix := fmt.Sprintf("rotation-%d-", run)
	_, counted, stop := runFleetController(tb, creds[0].member.Config(), p, prefix, n)
	defer stop()

	// Each member's cache reads one namespace, as in BenchmarkScale: the token can read no more.
	configs := make([]*rest.Config, n)
	for i, c := range creds {
		configs[i] = c.restConfig(tb)
	}
	names := make([]string, n)
	for i, c := range creds {
		names[i] = prefix + strconv.Itoa(i)
		p.namespaces.Store(configs[i].BearerToken, c.namespace)
		p.desired.Set(names[i], configs[i])
	}
	for _, name := range names {
		engine.Add(name)
	}
	select {
	case <-counted.all:
	case <-time.After(scaleCacheSyncTimeout):
		tb.Fatalf("only %d of %d members reconciled after %s", counted.first.Load(), n, scaleCacheSyncTimeout)
	}

	rotatedConfigs := secondTokens(tb, creds, configs)
	for i, c := range creds {
		p.namespaces.Store(rotatedConfigs[i].BearerToken, c.namespace)
	}
	settle(&counted.total)
	engaged := map[string]cluster.Cluster{}
	for _, name := range names {
		cl, err := p.Get(context.Background(), multicluster.ClusterName(name))
		if err != nil {
			tb.Fatalf("member %s: %v", name, err)
		}
		engaged[name] = cl
	}
	listsBefore := configMapLists(tb, creds)
	reconcilesBefore := counted.total.Load()
	cpuBefore := cpuTime()

	var r rotationResult
	r.n = n
	start := time.Now()
	for i, name := range names {
		p.desired.Set(name, rotatedConfigs[i])
		engine.Add(name)
	}
	select {
	case <-events.all:
	case <-time.After(scaleCacheSyncTimeout):
		events.mu.Lock()
		rotated := len(events.at)
		events.mu.Unlock()
		tb.Fatalf("only %d of %d members rotated after %s", rotated, n, scaleCacheSyncTimeout)
	}
	r.rotated = time.Since(start)
	settle(&counted.total)
	r.cpu = cpuTime() - cpuBefore
	r.reconciles = float64(counted.total.Load() - reconcilesBefore)
	r.lists = configMapLists(tb, creds) - listsBefore
	// A member engaged again is served by a new cluster whose cache starts empty and lists
	// before the Engine engages it (and records the Event): its cold time is bounded by the
	// time from the rotation to its Event. A member refreshed in place kept its synced cache.
	events.mu.Lock()
	defer events.mu.Unlock()
	for _, name := range names {
		cl, err := p.Get(context.Background(), multicluster.ClusterName(name))
		if err != nil {
			tb.Fatalf("member %s after the rotation: %v", name, err)
		}
		if cl != engaged[name] {
			r.coldCache += events.at[name].Sub(start)
		}
	}
	return r
}

// secondTokens mints a new token for the ServiceAccount of every credential and returns the
// configs with it, in the order of creds.
func secondTokens(tb testing.TB, creds []clusterCredentials, configs []*rest.Config) []*rest.Config {
	tb.Helper()
	clientsets := map[*envtest.Member]kubernetes.Interface{}
	for _, c := range creds {
		if clientsets[c.member] == nil {
			cfg := c.member.Config()
			cfg.QPS, cfg.Burst = -1, 0
			clientsets[c.member] = kubernetes.NewForConfigOrDie(cfg)
		}
	}
	out := make([]*rest.Config, len(creds))
	errs := make([]error, len(creds))
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, c := range creds {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			expiry := int64((12 * time.Hour).Seconds())
			tr, err := clientsets[c.member].CoreV1().ServiceAccounts(c.namespace).CreateToken(context.Background(), "scale",
				&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
			if err != nil {
				errs[i] = fmt.Errorf("new token in %s/%s: %w", c.member.Name(), c.namespace, err)
				return
			}
			cfg := rest.CopyConfig(configs[i])
			cfg.BearerToken = tr.Status.Token
			out[i] = cfg
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		tb.Fatal(err)
	}
	return out
}

// settle waits until a second passes without a reconcile.
func settle(reconciles *atomic.Int64) {
	last := reconciles.Load()
	for {
		time.Sleep(time.Second)
		now := reconciles.Load()
		if now == last {
			return
		}
		last = now
	}
}

// configMapLists sums the LIST and WATCH requests for ConfigMaps that the apiservers of creds
// have served, from their apiserver_request_total metric. Both count: client-go's informers
// list through a WATCH that first sends the current objects (WatchListClient), so a cold cache
// costs one such WATCH, or a LIST where the server does not stream.
func configMapLists(tb testing.TB, creds []clusterCredentials) float64 {
	tb.Helper()
	var total float64
	done := map[*envtest.Member]bool{}
	for _, c := range creds {
		if done[c.member] {
			continue
		}
		done[c.member] = true
		cs := kubernetes.NewForConfigOrDie(c.member.Config())
		body, err := cs.RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
		if err != nil {
			tb.Fatalf("metrics of %s: %v", c.member.Name(), err)
		}
		sc := bufio.NewScanner(strings.NewReader(string(body)))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if !strings.HasPrefix(line, "apiserver_request_total{") || !strings.Contains(line, `resource="configmaps"`) ||
				!strings.Contains(line, `verb="LIST"`) && !strings.Contains(line, `verb="WATCH"`) {
				continue
			}
			v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			if err != nil {
				tb.Fatalf("metrics of %s: %q: %v", c.member.Name(), line, err)
			}
			total += v
		}
	}
	return total
}
