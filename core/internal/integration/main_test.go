// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"mcr.dev/core/clusters"
	"mcr.dev/core/envtest"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
)

// fleet is shared by every test of the package: starting apiservers is the expensive part, so
// tests isolate themselves by namespace and controller name instead.
var fleet *envtest.Fleet

// members are the fleet members providers serve; "host" runs the local manager.
var members = []string{"a", "b", "c"}

func TestMain(m *testing.M) {
	log.SetLogger(logr.Discard())
	envtest.Main(m, envtest.Options{Members: append([]string{"host"}, members...)}, func(f *envtest.Fleet) error {
		fleet = f
		return nil
	})
}

// testProvider serves clusters added by the test, the way a real provider serves discovered
// ones: started and synced before they are engaged, bound to the provider's context.
type testProvider struct {
	*clusters.Clusters[cluster.Cluster]

	mu      sync.Mutex
	ctx     context.Context
	aware   multicluster.Aware
	started chan struct{}
}

func newTestProvider(opts clusters.Options[cluster.Cluster]) *testProvider {
	return &testProvider{Clusters: clusters.New(opts), started: make(chan struct{})}
}

func (p *testProvider) Start(ctx context.Context, aware multicluster.Aware) error {
	p.mu.Lock()
	p.ctx, p.aware = ctx, aware
	close(p.started)
	p.mu.Unlock()
	<-ctx.Done()
	return nil
}

// add engages a new cluster for cfg under name and returns once it is engaged (or failed).
func (p *testProvider) add(t testing.TB, name string, cfg *rest.Config) error {
	t.Helper()
	<-p.started
	cl, err := cluster.New(cfg, func(o *cluster.Options) { o.Logger = logr.Discard() })
	if err != nil {
		t.Fatalf("creating cluster %s: %v", name, err)
	}
	p.mu.Lock()
	ctx, aware := p.ctx, p.aware
	p.mu.Unlock()
	return p.Add(ctx, multicluster.ClusterName(name), cl, aware)
}

func (p *testProvider) mustAdd(t testing.TB, name string, cfg *rest.Config) {
	t.Helper()
	if err := p.add(t, name, cfg); err != nil {
		t.Fatalf("adding cluster %s: %v", name, err)
	}
}

// startManager creates a manager on the host member and runs it until the test ends.
func startManager(t testing.TB, provider multicluster.Provider, opts ...mcmanager.Option) mcmanager.Manager {
	t.Helper()
	return startManagerWithLogger(t, provider, logr.Discard(), opts...)
}

func startManagerWithLogger(t testing.TB, provider multicluster.Provider, logger logr.Logger, opts ...mcmanager.Option) mcmanager.Manager {
	t.Helper()
	skip := true
	mgr, err := mcmanager.New(fleet.Member("host").Config(), provider, mcmanager.Options{
		Logger:                 logger,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: &skip},
	}, opts...)
	if err != nil {
		t.Fatalf("creating manager: %v", err)
	}
	runManager(t, mgr)
	return mgr
}

func runManager(t testing.TB, mgr mcmanager.Manager) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("manager stopped with error: %v", err)
			}
		case <-time.After(time.Minute):
			t.Errorf("manager did not stop within a minute")
		}
	})
}

// eventually polls cond until it holds or the timeout passes; the timeout only bounds a hung
// test, it is not what the test asserts.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// namespace creates a fresh namespace with the same name in the given members.
func namespace(t testing.TB, memberNames ...string) string {
	t.Helper()
	return envtest.NamespaceForTest(t, "t", fleet.MembersForTest(t, memberNames...)...)
}

// memberClient is a direct client to a member, bypassing every provider.
func memberClient(t testing.TB, member string) client.Client {
	t.Helper()
	return fleet.Member(member).ClientForTest(t, client.Options{})
}

func createConfigMap(t testing.TB, member, ns, name string, data map[string]string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
	if err := memberClient(t, member).Create(context.Background(), cm); err != nil {
		t.Fatalf("creating configmap %s/%s in %s: %v", ns, name, member, err)
	}
}

// captureLogger returns a logger that records every line with its key/value pairs.
func captureLogger() (logr.Logger, func() []string) {
	var mu sync.Mutex
	var lines []string
	l := funcr.New(func(prefix, args string) {
		mu.Lock()
		lines = append(lines, prefix+" "+args)
		mu.Unlock()
	}, funcr.Options{Verbosity: 1})
	return l, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), lines...)
	}
}
