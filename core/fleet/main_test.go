// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package fleet_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/config"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"mcr.dev/core/envtest"
	"mcr.dev/core/fleet"
	"mcr.dev/core/internal/testcheck"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/clusters"
)

// members is shared by the tests of this package, which isolate themselves by namespace:
// "host" runs the managers, "a", "b" and "c" are the fleet, and "c" is stopped by the test that
// needs an outage.
var members *envtest.Fleet

func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard())
	// Informers of a stopped member log every retry through klog.
	klog.SetLogger(logr.Discard())
	envtest.Main(m, envtest.Options{Members: []string{"host", "a", "b", "c"}}, func(f *envtest.Fleet) error {
		members = f
		return nil
	})
}

// newProvider returns a provider of the named members, engaged once the manager starts it.
func newProvider(t testing.TB, names ...string) *clusters.Provider {
	t.Helper()
	p := clusters.New(clusters.Options{Logger: logr.Discard()})
	for _, name := range names {
		if err := p.Add(t.Context(), multicluster.ClusterName(name), newCluster(t, members.Member(name).Config())); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// newCluster builds an unstarted cluster for cfg.
func newCluster(t testing.TB, cfg *rest.Config) cluster.Cluster {
	t.Helper()
	cl, err := cluster.New(cfg, func(o *cluster.Options) { o.Logger = logr.Discard() })
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// startedCluster runs cl until the test ends, as a provider would.
func startedCluster[C cluster.Cluster](t testing.TB, cl C) C {
	t.Helper()
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

// newManager returns a manager on the host; it runs only when the test runs it.
func newManager(t testing.TB, provider multicluster.Provider) mcmanager.Manager {
	t.Helper()
	mgr, err := mcmanager.New(members.Member("host").Config(), provider, mcmanager.Options{
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

// newReader returns a reader added to mgr.
func newReader(t testing.TB, mgr mcmanager.Manager, opts fleet.Options) *fleet.Reader {
	t.Helper()
	r, err := fleet.New(mgr, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// runManager runs mgr until the test ends, and waits until it has engaged the named clusters.
func runManager(t testing.TB, mgr mcmanager.Manager, engaged ...multicluster.ClusterName) {
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
	testcheck.WaitFor(t, fmt.Sprintf("the manager to engage %q", engaged), func() bool {
		return slices.Equal(mgr.EngagedClusters(), engaged)
	})
}

// returns calls fn and fails the test when it does not return within a minute: fleet reads
// are bounded by their per-cluster timeout, whatever a cluster does.
func returns[T any](t testing.TB, what string, fn func() (T, error)) (T, error) {
	t.Helper()
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := fn()
		done <- result{v, err}
	}()
	select {
	case res := <-done:
		return res.v, res.err
	case <-time.After(time.Minute):
		t.Fatalf("%s did not return", what)
		panic("unreachable")
	}
}

// stopMember stops m until the test ends.
func stopMember(t testing.TB, m *envtest.Member) {
	t.Helper()
	if err := m.Stop(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Start(context.Background()); err != nil {
			t.Errorf("restarting %s: %v", m.Name(), err)
		}
	})
}

// namespace creates a fresh namespace of the same name in the named members.
func namespace(t testing.TB, names ...string) string {
	t.Helper()
	return envtest.NamespaceForTest(t, "fleet", members.MembersForTest(t, names...)...)
}

// memberClient is a direct client to a member.
func memberClient(t testing.TB, name string) client.Client {
	t.Helper()
	return members.Member(name).ClientForTest(t, client.Options{})
}

func create(t testing.TB, member string, obj client.Object) {
	t.Helper()
	if err := memberClient(t, member).Create(t.Context(), obj); err != nil {
		t.Fatalf("creating %s/%s in %s: %v", obj.GetNamespace(), obj.GetName(), member, err)
	}
}

func configMap(ns, name string, labels, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}, Data: data}
}

// keys returns "cluster/name" of each item.
func keys[T client.Object](items []fleet.Item[T]) []string {
	out := make([]string, len(items))
	for i, item := range items {
		out[i] = string(item.Cluster) + "/" + item.Object.GetName()
	}
	return out
}
