// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kit_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/clusters"
	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
)

// memberProvider is the smallest provider on the kit: the test sets each member's config in a
// Desired set and queues its name; Sync engages what is desired and disengages the rest.
type memberProvider struct {
	kit.Members[string]
	engine  *kit.Engine[string]
	desired kit.Desired[string, *rest.Config]
	objects sync.Map // name → *corev1.ConfigMap the member's Events go on
	errs    *prometheus.CounterVec
	broken  prometheus.Gauge
	events  *safeRecorder
}

func newMemberProvider(t *testing.T, opts kit.Options) *memberProvider {
	t.Helper()
	p := &memberProvider{
		errs:   prometheus.NewCounterVec(prometheus.CounterOpts{Name: "errors_total"}, []string{"reason"}),
		broken: prometheus.NewGauge(prometheus.GaugeOpts{Name: "broken"}),
		events: &safeRecorder{},
	}
	if opts.CacheSyncTimeout == 0 {
		opts.CacheSyncTimeout = 5 * time.Second
	}
	if opts.RetryMinDelay == 0 {
		opts.RetryMinDelay, opts.RetryMaxDelay = 50*time.Millisecond, 500*time.Millisecond
	}
	opts.EventRecorder = p.events
	e, err := p.Init(kit.EngineOptions[string]{
		Name:    "member-provider",
		Options: opts,
		Sync:    p.sync,
		Errors:  p.errs,
		Broken:  p.broken,
	})
	if err != nil {
		t.Fatal(err)
	}
	p.engine = e
	return p
}

func (p *memberProvider) object(name string) *corev1.ConfigMap {
	obj, _ := p.objects.LoadOrStore(name, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: name}})
	return obj.(*corev1.ConfigMap)
}

func (p *memberProvider) sync(ctx context.Context, name string) kit.Result {
	cfg, ok := p.desired.Get(name)
	if !ok {
		p.engine.Disengage(multicluster.ClusterName(name), nil, "it is no longer desired")
		return kit.Result{}
	}
	return p.engine.Engage(ctx, name, kit.Member{Name: multicluster.ClusterName(name), Config: cfg, Regarding: p.object(name), From: "the test"})
}

// set makes cfg the desired config of name (nil: not desired) and queues name.
func (p *memberProvider) set(name string, cfg *rest.Config) {
	if cfg == nil {
		p.desired.Delete(name)
	} else {
		p.desired.Set(name, cfg)
	}
	p.engine.Add(name)
}

// safeRecorder keeps the reasons of the Events recorded, per regarding object name, and every
// Event as text.
type safeRecorder struct {
	mu      sync.Mutex
	reasons map[string][]string
	events  []string
}

func (r *safeRecorder) Eventf(regarding, _ runtime.Object, eventType, reason, action, note string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reasons == nil {
		r.reasons = map[string][]string{}
	}
	name := regarding.(metav1.Object).GetName()
	r.reasons[name] = append(r.reasons[name], reason)
	r.events = append(r.events, fmt.Sprintf("%s %s %s %s: %s", name, eventType, reason, action, fmt.Sprintf(note, args...)))
}

// all returns every Event so far as text: object name, type, reason, action and note.
func (r *safeRecorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

func (r *safeRecorder) of(name string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.reasons[name])
}

func waitReason(t *testing.T, r *safeRecorder, name, reason string) {
	t.Helper()
	providertest.Eventually(t, time.Minute, fmt.Sprintf("%s Event on %s", reason, name), func() error {
		if !slices.Contains(r.of(name), reason) {
			return fmt.Errorf("Events so far: %v", r.of(name))
		}
		return nil
	})
}

func TestEngineEngagesRotatesAndDisengages(t *testing.T) {
	fleet := envtest.StartForTest(t, "east")
	p := newMemberProvider(t, kit.Options{})
	run := providertest.Start(t, p, time.Minute)

	cfg := fleet.Member("east").Config()
	cfg.QPS, cfg.Burst = 0, 0 // as most kubeconfigs leave them
	p.set("east", cfg)
	first := run.Recorder.WaitEngaged(t, p, "east", time.Minute)
	if got := first.Cluster.GetConfig(); got.QPS != kit.DefaultQPS || got.Burst != kit.DefaultBurst {
		t.Errorf("engaged config has QPS %v, Burst %v; want the kit's defaults", got.QPS, got.Burst)
	}
	waitReason(t, p.events, "east", kit.ReasonClusterEngaged)

	// A copy of the same credentials changes nothing.
	p.set("east", fleet.Member("east").Config())
	p.set("other-key-to-wait-for", nil)
	providertest.Eventually(t, time.Minute, "the unchanged member synced", func() error {
		if n := run.Recorder.Count("east"); n != 1 {
			return fmt.Errorf("engaged %d times", n)
		}
		return nil
	})

	// Other credentials (another identity) replace the engaged instance.
	rotated := fleet.Member("east").Config()
	rotated.Impersonate.UserName = "system:admin"
	p.set("east", rotated)
	second := run.Recorder.WaitReengaged(t, p, "east", first, time.Minute)
	if second.Cluster.GetConfig().Impersonate.UserName != "system:admin" {
		t.Error("the re-engaged cluster does not have the new credentials")
	}
	waitReason(t, p.events, "east", kit.ReasonCredentialsRotated)

	p.set("east", nil)
	run.Recorder.WaitDisengaged(t, p, "east", second, time.Minute)
	if p.engine.IsEngaged("east") {
		t.Error("IsEngaged after Disengage")
	}
}

func TestEngineRetriesUnreachableMemberWhileOthersCarryOn(t *testing.T) {
	fleet := envtest.StartForTest(t, "up", "down")
	down := fleet.Member("down")
	downConfig := down.Config()
	if err := down.Stop(); err != nil {
		t.Fatal(err)
	}
	p := newMemberProvider(t, kit.Options{CacheSyncTimeout: 2 * time.Second})
	run := providertest.Start(t, p, time.Minute)

	p.set("down", downConfig)
	p.set("up", fleet.Member("up").Config())
	run.Recorder.WaitEngaged(t, p, "up", time.Minute)
	waitReason(t, p.events, "down", kit.ReasonClusterUnreachable)
	if run.Recorder.Count("down") != 0 {
		t.Fatal("an unreachable member was engaged")
	}
	if got := testutil.ToFloat64(p.broken); got != 1 {
		t.Errorf("broken gauge = %v with one unreachable member, want 1", got)
	}
	if got := testutil.ToFloat64(p.errs.WithLabelValues(kit.ReasonClusterUnreachable)); got < 1 {
		t.Errorf("errors{reason=ClusterUnreachable} = %v, want at least 1", got)
	}
	if n := len(slices.DeleteFunc(p.events.of("down"), func(r string) bool { return r != kit.ReasonClusterUnreachable })); n != 1 {
		t.Errorf("%d ClusterUnreachable Events while the problem stayed the same, want 1", n)
	}

	// Retried with backoff, without any change: engaged once it answers.
	if err := down.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	run.Recorder.WaitEngaged(t, p, "down", time.Minute)
	providertest.Eventually(t, time.Minute, "broken gauge back to 0", func() error {
		if got := testutil.ToFloat64(p.broken); got != 0 {
			return fmt.Errorf("broken = %v", got)
		}
		return nil
	})
}

func TestEngineKeepsWorkingMemberWhenNewCredentialsFail(t *testing.T) {
	fleet := envtest.StartForTest(t, "east")
	p := newMemberProvider(t, kit.Options{})
	run := providertest.Start(t, p, time.Minute)

	p.set("east", fleet.Member("east").Config())
	engaged := run.Recorder.WaitEngaged(t, p, "east", time.Minute)

	// Credentials the member refuses: reported, retried, and the working instance stays.
	bad := fleet.Member("east").Config()
	bad.CertData, bad.KeyData, bad.BearerToken = nil, nil, "not-a-token"
	p.set("east", bad)
	waitReason(t, p.events, "east", kit.ReasonUnauthorized)
	if !engaged.Alive() || !p.engine.IsEngaged("east") {
		t.Fatal("the working member was disengaged because its new credentials were refused")
	}
	// RESTOptions that fail: a setup problem, not retried, the member still stays.
	p2 := newMemberProvider(t, kit.Options{RESTOptions: []func(*rest.Config) error{func(*rest.Config) error { return errors.New("no") }}})
	run2 := providertest.Start(t, p2, time.Minute)
	p2.set("west", fleet.Member("east").Config())
	waitReason(t, p2.events, "west", kit.ReasonClusterSetupFailed)
	if run2.Recorder.Count("west") != 0 {
		t.Error("a member whose RESTOptions failed was engaged")
	}

	// Good credentials again resolve the problem.
	p.set("east", fleet.Member("east").Config())
	providertest.Eventually(t, time.Minute, "problem resolved", func() error {
		if got := testutil.ToFloat64(p.broken); got != 0 {
			return fmt.Errorf("broken = %v", got)
		}
		return nil
	})
}

// stoppable is a real cluster whose Start returns early, without error, when stop is closed: a
// cluster that stops on its own.
type stoppable struct {
	cluster.Cluster
	stop chan struct{}
}

func (s *stoppable) Start(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-s.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	return s.Cluster.Start(ctx)
}

func TestEngineReengagesPrebuiltClusterThatStoppedOnItsOwn(t *testing.T) {
	fleet := envtest.StartForTest(t, "east")
	var (
		set   clusters.Clusters[cluster.Cluster]
		mu    sync.Mutex
		built []*stoppable
	)
	set.Options.CacheSyncTimeout = 10 * time.Second
	var e *kit.Engine[string]
	e, err := kit.NewEngine(kit.EngineOptions[string]{
		Name:     "prebuilt-provider",
		Options:  kit.Options{RetryMinDelay: 50 * time.Millisecond, RetryMaxDelay: time.Second},
		Clusters: &set,
		Sync: func(ctx context.Context, key string) kit.Result {
			if e.IsEngaged(multicluster.ClusterName(key)) {
				return kit.Result{}
			}
			cl, err := cluster.New(fleet.Member("east").Config())
			if err != nil {
				return e.Fail(key, kit.Member{Name: multicluster.ClusterName(key)}, kit.Permanent(kit.ReasonClusterSetupFailed, err))
			}
			s := &stoppable{Cluster: cl, stop: make(chan struct{})}
			mu.Lock()
			built = append(built, s)
			mu.Unlock()
			return e.Engage(ctx, key, kit.Member{Name: multicluster.ClusterName(key), Cluster: s})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	run := providertest.Start(t, providerFunc(e.Run), time.Minute)
	e.Add("east")
	first := run.Recorder.WaitEngaged(t, &set, "east", time.Minute)
	mu.Lock()
	close(built[0].stop)
	mu.Unlock()
	run.Recorder.WaitReengaged(t, &set, "east", first, time.Minute)
}

// providerFunc runs a Run function as a provider.
type providerFunc func(context.Context, multicluster.Aware) error

func (f providerFunc) Start(ctx context.Context, aware multicluster.Aware) error {
	return f(ctx, aware)
}
func (f providerFunc) Get(context.Context, multicluster.ClusterName) (cluster.Cluster, error) {
	return nil, multicluster.ErrClusterNotFound
}

func (f providerFunc) IndexField(context.Context, client.Object, string, client.IndexerFunc) error {
	return nil
}

func TestEngineRefusesEmptyNameAndSecondRun(t *testing.T) {
	p := newMemberProvider(t, kit.Options{})
	run := providertest.Start(t, p, time.Minute)
	p.set("", &rest.Config{Host: "https://127.0.0.1:1"})
	waitReason(t, p.events, "", kit.ReasonClusterSetupFailed)
	if run.Recorder.Count("") != 0 {
		t.Error("a member with an empty name was engaged")
	}
	if err := p.engine.Run(t.Context(), nil); err == nil || !strings.Contains(err.Error(), "member provider: Start called twice") {
		t.Errorf("second Run = %v, want an error naming the provider", err)
	}
}

func TestCheckAccessKeepsURLSecretsOutOfErrors(t *testing.T) {
	fleet := envtest.StartForTest(t, "east")
	cl, err := cluster.New(fleet.Member("east").Config())
	if err != nil {
		t.Fatal(err)
	}
	if err := kit.CheckAccess(t.Context(), cl); err != nil {
		t.Errorf("CheckAccess on a working member: %v", err)
	}

	refused := fleet.Member("east").Config()
	refused.CertData, refused.KeyData, refused.BearerToken = nil, nil, "not-a-token"
	cl, err = cluster.New(refused)
	if err != nil {
		t.Fatal(err)
	}
	if err := kit.CheckAccess(t.Context(), cl); !errors.Is(err, kit.ErrUnauthorized) {
		t.Errorf("CheckAccess with refused credentials = %v, want ErrUnauthorized", err)
	}

	// Nothing listens on port 1; the URL carries a password and a token in its query.
	unreachable := &rest.Config{Host: "https://user:hunter2@127.0.0.1:1/?token=s3cret"}
	cl, err = cluster.New(unreachable)
	if err != nil {
		t.Fatal(err)
	}
	err = kit.CheckAccess(t.Context(), cl)
	if !errors.Is(err, kit.ErrUnreachable) {
		t.Fatalf("CheckAccess on nothing = %v, want ErrUnreachable", err)
	}
	for _, secret := range []string{"hunter2", "s3cret"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("CheckAccess error %q contains a secret of the URL", err)
		}
	}
}

func TestMetricsAreNamedAlike(t *testing.T) {
	errs, broken := kit.NewErrorsMetric("kind-provider"), kit.NewBrokenMetric("kind-provider", "clusters")
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(errs); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(broken); err != nil {
		t.Fatal(err)
	}
	errs.WithLabelValues(kit.ReasonClusterUnreachable).Inc()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range families {
		got = append(got, f.GetName())
	}
	want := []string{"mcr_kind_provider_broken_clusters", "mcr_kind_provider_errors_total"}
	if !slices.Equal(got, want) {
		t.Errorf("metric names %v, want %v", got, want)
	}
}

func TestCheckServedTakesNotFoundForAMemberThatIsNotThere(t *testing.T) {
	// A front door that routes by path and serves nothing on this one.
	door := httptest.NewServer(http.NotFoundHandler())
	defer door.Close()
	cl, err := cluster.New(&rest.Config{Host: door.URL + "/projects/gone/control-plane"})
	if err != nil {
		t.Fatal(err)
	}
	if err := kit.CheckAccess(t.Context(), cl); err != nil {
		t.Errorf("CheckAccess = %v; a 404 means reviews are not served, which is reachable", err)
	}
	if err := kit.CheckServed(t.Context(), cl); !errors.Is(err, kit.ErrUnreachable) {
		t.Errorf("CheckServed = %v, want ErrUnreachable", err)
	}
}

func TestMembersStartWithoutInitFails(t *testing.T) {
	var m kit.Members[string]
	if err := m.Start(t.Context(), nil); err == nil || !strings.Contains(err.Error(), "Members.Init") {
		t.Errorf("Start of a Members never initialized = %v, want an error naming Members.Init", err)
	}
}
