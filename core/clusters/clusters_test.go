// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusters_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/clusters"
	"mcr.dev/core/internal/testcheck"
	"mcr.dev/core/multicluster"
)

func TestAddGetRemove(t *testing.T) {
	ctx := t.Context()
	var cs clusters.Clusters[cluster.Cluster]
	var engaged clusters.Registry[cluster.Cluster]

	a, b := trackStart(memberCluster(t, "a")), trackStart(memberCluster(t, "b"))
	if err := cs.Add(ctx, "a", a, &engaged); err != nil {
		t.Fatalf("Add a: %v", err)
	}
	if err := cs.Add(ctx, "b", b, &engaged); err != nil {
		t.Fatalf("Add b: %v", err)
	}

	got, err := cs.Get(ctx, "a")
	if err != nil || got != a {
		t.Fatalf("Get a = %v, %v; want the added instance", got, err)
	}
	if got, err := cs.Get(ctx, "nope"); !errors.Is(err, multicluster.ErrClusterNotFound) || got != nil {
		t.Fatalf("Get nope = %v, %v; want nil and ErrClusterNotFound", got, err)
	}
	if names := cs.ClusterNames(); !slices.Equal(names, []multicluster.ClusterName{"a", "b"}) {
		t.Fatalf("ClusterNames = %v", names)
	}
	if err := cs.Add(ctx, "a", trackStart(memberCluster(t, "a")), &engaged); !errors.Is(err, clusters.ErrClusterExists) {
		t.Fatalf("second Add of a: err = %v, want ErrClusterExists", err)
	}
	if names := engaged.ClusterNames(); !slices.Equal(names, []multicluster.ClusterName{"a", "b"}) {
		t.Fatalf("engaged = %v", names)
	}

	// The cache is synced and usable as soon as Add returns.
	var nss corev1.NamespaceList
	if err := got.GetCache().List(ctx, &nss); err != nil || len(nss.Items) == 0 {
		t.Fatalf("listing namespaces from the cache of a: %d items, %v", len(nss.Items), err)
	}

	cs.Remove("a")
	if !a.hasReturned() {
		t.Fatal("Remove returned before the cluster's Start did")
	}
	if _, err := cs.Get(ctx, "a"); !errors.Is(err, multicluster.ErrClusterNotFound) {
		t.Fatalf("Get a after Remove: %v", err)
	}
	if cs.Len() != 1 {
		t.Fatalf("Len = %d, want 1", cs.Len())
	}
	testcheck.WaitFor(t, "a to be disengaged", func() bool { return engaged.Len() == 1 })
	cs.Remove("a") // unknown names are ignored

	cs.Remove("b")
	if !b.hasReturned() {
		t.Fatal("Remove returned before the cluster's Start did")
	}
}

func TestAddWithCanceledContextFails(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var cs clusters.Clusters[cluster.Cluster]
	if err := cs.Add(ctx, "a", memberCluster(t, "a"), nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Add with a canceled context: %v", err)
	}
	if cs.Len() != 0 {
		t.Fatalf("Len = %d", cs.Len())
	}
}

// An unreachable cluster fails its own Add after CacheSyncTimeout; healthy clusters added at the
// same time are engaged while it is still waiting.
func TestConcurrentAddsWithUnreachableMember(t *testing.T) {
	ctx := t.Context()
	down, err := fleet.AddMember(ctx, "down")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fleet.RemoveMember("down") })

	// Ask for an informer while the member answers, so its cache has something to sync.
	unreachable := trackStart(newCluster(t, down.Config()))
	if _, err := unreachable.GetCache().GetInformer(ctx, &corev1.ConfigMap{}, cache.BlockUntilSynced(false)); err != nil {
		t.Fatal(err)
	}
	if err := down.Stop(); err != nil {
		t.Fatal(err)
	}

	const timeout = 8 * time.Second
	cs := clusters.New(clusters.Options[cluster.Cluster]{CacheSyncTimeout: timeout})
	events := &eventLog{}

	downErr := make(chan error, 1)
	go func() { downErr <- cs.Add(ctx, "down", unreachable, events) }()

	var wg sync.WaitGroup
	healthyErrs := make([]error, 2)
	for i, name := range []string{"a", "b"} {
		wg.Go(func() { healthyErrs[i] = cs.Add(ctx, multicluster.ClusterName(name), memberCluster(t, name), events) })
	}
	wg.Wait()
	for _, err := range healthyErrs {
		if err != nil {
			t.Fatalf("healthy Add failed: %v", err)
		}
	}
	select {
	case err := <-downErr:
		t.Fatalf("the unreachable cluster's Add returned before the healthy ones were engaged: %v", err)
	default:
	}

	err = <-downErr
	if !errors.Is(err, clusters.ErrCacheSyncTimeout) {
		t.Fatalf("unreachable Add: err = %v, want ErrCacheSyncTimeout", err)
	}
	if want := `cluster "down"`; !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not name the cluster", err)
	}
	if !unreachable.hasReturned() {
		t.Fatal("the failed cluster is still running")
	}
	if _, err := cs.Get(ctx, "down"); !errors.Is(err, multicluster.ErrClusterNotFound) {
		t.Fatalf("Get down: %v", err)
	}
	got := events.snapshot()
	slices.Sort(got)
	if want := []string{"engage a#1", "engage b#1"}; !slices.Equal(got, want) {
		t.Fatalf("events = %v, want %v", got, want)
	}
	cs.Remove("a")
	cs.Remove("b")
}

func TestIndexesAppliedToExistingAndLaterClusters(t *testing.T) {
	ctx := t.Context()
	var cs clusters.Clusters[cluster.Cluster]
	byData := func(obj client.Object) []string { return []string{obj.(*corev1.ConfigMap).Data["color"]} }
	byName := func(obj client.Object) []string { return []string{obj.GetName()} }

	if err := cs.IndexField(ctx, &corev1.ConfigMap{}, "color", byData); err != nil {
		t.Fatal(err)
	}
	a := countIndexes(memberCluster(t, "a"))
	if err := cs.Add(ctx, "a", a, nil); err != nil {
		t.Fatal(err)
	}
	defer cs.Remove("a")
	if err := cs.IndexField(ctx, &corev1.ConfigMap{}, "name", byName); err != nil {
		t.Fatal(err)
	}
	// Same type and field again: idempotent, not an indexer conflict.
	if err := cs.IndexField(ctx, &corev1.ConfigMap{}, "color", byData); err != nil {
		t.Fatalf("repeated IndexField: %v", err)
	}
	b := countIndexes(memberCluster(t, "b"))
	if err := cs.Add(ctx, "b", b, nil); err != nil {
		t.Fatal(err)
	}
	defer cs.Remove("b")

	for name, cl := range map[string]*indexCounter{"a": a, "b": b} {
		for _, key := range []string{"*v1.ConfigMap/color", "*v1.ConfigMap/name"} {
			if n := cl.count(key); n != 1 {
				t.Errorf("cluster %s: index %s applied %d times, want 1", name, key, n)
			}
		}
	}
	if n := len(cs.Indexes()); n != 2 {
		t.Fatalf("Indexes() has %d entries, want 2", n)
	}

	// The indexes work on a real cache.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "index-test"}, Data: map[string]string{"color": "teal"}}
	if err := b.GetClient().Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.GetClient().Delete(context.Background(), cm) }()
	testcheck.WaitFor(t, "the configmap to be indexed", func() bool {
		var list corev1.ConfigMapList
		err := b.GetCache().List(ctx, &list, client.MatchingFields{"color": "teal"})
		return err == nil && len(list.Items) == 1
	})
}

// IndexField racing with Add reaches the new cluster exactly once per index: a second
// application would be an "indexer conflict" on the real cache and fail the Add.
func TestIndexFieldRacingAdd(t *testing.T) {
	ctx := t.Context()
	fields := []string{"f0", "f1", "f2", "f3"}
	for round := range 6 {
		var cs clusters.Clusters[cluster.Cluster]
		cl := countIndexes(memberCluster(t, "a"))
		var wg sync.WaitGroup
		var addErr error
		indexErrs := make([]error, len(fields))
		wg.Go(func() { addErr = cs.Add(ctx, "a", cl, nil) })
		for i, field := range fields {
			wg.Go(func() {
				indexErrs[i] = cs.IndexField(ctx, &corev1.ConfigMap{}, field, func(client.Object) []string { return nil })
			})
		}
		wg.Wait()
		if err := errors.Join(append(indexErrs, addErr)...); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		for _, field := range fields {
			if n := cl.count("*v1.ConfigMap/" + field); n != 1 {
				t.Fatalf("round %d: index %s applied %d times, want 1", round, field, n)
			}
		}
		cs.Remove("a")
	}
}

func TestFailedEngageRollsBack(t *testing.T) {
	ctx := t.Context()
	var cs clusters.Clusters[cluster.Cluster]
	boom := errors.New("boom")
	cl := trackStart(memberCluster(t, "a"))
	err := cs.Add(ctx, "a", cl, &eventLog{fail: boom})
	if !errors.Is(err, boom) {
		t.Fatalf("Add: err = %v, want it to wrap the Engage error", err)
	}
	if !cl.hasReturned() {
		t.Fatal("the cluster still runs after a failed Engage")
	}
	if _, err := cs.Get(ctx, "a"); !errors.Is(err, multicluster.ErrClusterNotFound) {
		t.Fatalf("Get after failed Add: %v", err)
	}
	if cs.Len() != 0 {
		t.Fatalf("Len = %d, want 0", cs.Len())
	}
	// The name is free again.
	if err := cs.Add(ctx, "a", memberCluster(t, "a"), nil); err != nil {
		t.Fatalf("Add after rollback: %v", err)
	}
	cs.Remove("a")
}

func TestClusterStoppingOnItsOwnIsDisengaged(t *testing.T) {
	ctx := t.Context()
	var cs clusters.Clusters[cluster.Cluster]
	events := &eventLog{}
	cl := trackStart(memberCluster(t, "a"))
	if err := cs.Add(ctx, "a", cl, events); err != nil {
		t.Fatal(err)
	}
	close(cl.failNow)
	testcheck.WaitFor(t, "the failed cluster to be forgotten", func() bool { return cs.Len() == 0 })
	testcheck.WaitFor(t, "the failed cluster to be disengaged", func() bool { return len(events.snapshot()) == 2 })
	if got, want := events.snapshot(), []string{"engage a#1", "disengage a#1"}; !slices.Equal(got, want) {
		t.Fatalf("events = %v, want %v", got, want)
	}
	// The name can be added again.
	if err := cs.Add(ctx, "a", memberCluster(t, "a"), events); err != nil {
		t.Fatal(err)
	}
	cs.Remove("a")
}

func TestAddOrReplace(t *testing.T) {
	ctx := t.Context()
	var cs clusters.Clusters[cluster.Cluster]
	events := &eventLog{}
	first := trackStart(memberCluster(t, "a"))
	if err := cs.AddOrReplace(ctx, "a", first, events); err != nil {
		t.Fatal(err)
	}

	// Same endpoint and credentials: nothing happens.
	same := memberCluster(t, "a")
	if err := cs.AddOrReplace(ctx, "a", same, events); err != nil {
		t.Fatal(err)
	}
	if got, _ := cs.Get(ctx, "a"); got != first {
		t.Fatal("an equal cluster replaced the engaged one")
	}

	// A new identity: the new instance is engaged before the old one is disengaged.
	cfg := fleet.Member("a").Config()
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "rotated", Groups: []string{"system:masters"}}
	second := trackStart(newCluster(t, cfg))
	if err := cs.AddOrReplace(ctx, "a", second, events); err != nil {
		t.Fatal(err)
	}
	if got, _ := cs.Get(ctx, "a"); got != second {
		t.Fatal("the new instance is not served")
	}
	if !first.hasReturned() {
		t.Fatal("the replaced instance still runs")
	}
	testcheck.WaitFor(t, "the old instance to be disengaged", func() bool { return len(events.snapshot()) == 3 })
	if got, want := events.snapshot(), []string{"engage a#1", "engage a#2", "disengage a#1"}; !slices.Equal(got, want) {
		t.Fatalf("events = %v, want %v", got, want)
	}

	// A replacement whose Engage fails leaves the old instance engaged.
	cfg = fleet.Member("a").Config() // cluster.New keeps the pointer it was given
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "rotated-again", Groups: []string{"system:masters"}}
	third := trackStart(newCluster(t, cfg))
	events.mu.Lock()
	events.fail = errors.New("no thanks")
	events.mu.Unlock()
	if err := cs.AddOrReplace(ctx, "a", third, events); err == nil {
		t.Fatal("AddOrReplace succeeded although Engage failed")
	}
	if got, _ := cs.Get(ctx, "a"); got != second {
		t.Fatal("a failed replacement did not restore the engaged instance")
	}
	if !third.hasReturned() || second.hasReturned() {
		t.Fatal("wrong instance stopped after a failed replacement")
	}
	cs.Remove("a")
	if !second.hasReturned() {
		t.Fatal("Remove left the cluster running")
	}
}

func TestRemoveLeavesNoGoroutines(t *testing.T) {
	ctx := t.Context()
	var cs clusters.Clusters[cluster.Cluster]
	cycle := func(i int) {
		name := multicluster.ClusterName(fmt.Sprintf("c%d", i))
		cl := memberCluster(t, "a")
		// One informer, so that each cycle runs a reflector and a watch.
		if _, err := cl.GetCache().GetInformer(ctx, &corev1.ConfigMap{}, cache.BlockUntilSynced(false)); err != nil {
			t.Fatal(err)
		}
		if err := cs.Add(ctx, name, cl, &clusters.Registry[cluster.Cluster]{}); err != nil {
			t.Fatal(err)
		}
		cs.Remove(name)
	}
	// Warm up: client-go starts a few process-wide goroutines on first use.
	for i := range 2 {
		cycle(i)
	}
	baseline := testcheck.SettledGoroutines()
	const cycles = 30
	for i := range cycles {
		cycle(100 + i)
	}
	// A small tolerance for runtime and HTTP/2 housekeeping goroutines that come and go.
	testcheck.WaitForGoroutines(t, baseline+3, 30*time.Second)
}

func TestEqualConfigs(t *testing.T) {
	base := func() *rest.Config {
		return &rest.Config{
			Host:            "https://10.0.0.1:6443",
			BearerToken:     "token",
			TLSClientConfig: rest.TLSClientConfig{CAData: []byte("ca"), CertData: []byte("cert"), KeyData: []byte("key")},
			QPS:             5,
		}
	}
	proxy := func(raw string) func(*http.Request) (*url.URL, error) {
		u, _ := url.Parse(raw)
		return http.ProxyURL(u)
	}
	tests := []struct {
		name   string
		change func(*rest.Config)
		equal  bool
	}{
		{"identical", func(*rest.Config) {}, true},
		{"trailing slash on host", func(c *rest.Config) { c.Host += "/" }, true},
		{"rate limits and user agent ignored", func(c *rest.Config) { c.QPS, c.Burst, c.UserAgent, c.Timeout = 50, 100, "x", time.Second }, true},
		{"host", func(c *rest.Config) { c.Host = "https://10.0.0.2:6443" }, false},
		{"api path", func(c *rest.Config) { c.APIPath = "/clusters/x" }, false},
		{"bearer token", func(c *rest.Config) { c.BearerToken = "rotated" }, false},
		{"bearer token file", func(c *rest.Config) { c.BearerTokenFile = "/var/run/token" }, false},
		{"basic auth user", func(c *rest.Config) { c.Username = "admin" }, false},
		{"basic auth password", func(c *rest.Config) { c.Password = "secret" }, false},
		{"ca data", func(c *rest.Config) { c.CAData = []byte("other-ca") }, false},
		{"client cert", func(c *rest.Config) { c.CertData = []byte("other-cert") }, false},
		{"client key", func(c *rest.Config) { c.KeyData = []byte("other-key") }, false},
		{"cert file", func(c *rest.Config) { c.CertFile = "/tls.crt" }, false},
		{"ca file", func(c *rest.Config) { c.CAFile = "/ca.crt" }, false},
		{"insecure", func(c *rest.Config) { c.Insecure = true }, false},
		{"server name", func(c *rest.Config) { c.ServerName = "kubernetes" }, false},
		{"impersonation", func(c *rest.Config) { c.Impersonate.UserName = "bob" }, false},
		{"impersonation extra", func(c *rest.Config) { c.Impersonate.Extra = map[string][]string{"k": {"v"}} }, false},
		{"exec plugin", func(c *rest.Config) { c.ExecProvider = &clientcmdapi.ExecConfig{Command: "get-token"} }, false},
		{"auth provider", func(c *rest.Config) { c.AuthProvider = &clientcmdapi.AuthProviderConfig{Name: "oidc"} }, false},
		{"proxy", func(c *rest.Config) { c.Proxy = proxy("http://proxy:3128") }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := base(), base()
			tt.change(b)
			if got := clusters.EqualConfigs(a, b); got != tt.equal {
				t.Fatalf("EqualConfigs = %v, want %v", got, tt.equal)
			}
			if got := clusters.EqualConfigs(b, a); got != tt.equal {
				t.Fatalf("EqualConfigs is not symmetric")
			}
		})
	}

	t.Run("exec args", func(t *testing.T) {
		a, b := base(), base()
		a.ExecProvider = &clientcmdapi.ExecConfig{Command: "get-token", Args: []string{"--cluster", "x"}}
		b.ExecProvider = &clientcmdapi.ExecConfig{Command: "get-token", Args: []string{"--cluster", "y"}}
		if clusters.EqualConfigs(a, b) {
			t.Fatal("different exec arguments compare equal")
		}
		b.ExecProvider.Args[1] = "x"
		if !clusters.EqualConfigs(a, b) {
			t.Fatal("equal exec configs compare different")
		}
	})
	t.Run("proxies compared by behavior", func(t *testing.T) {
		a, b := base(), base()
		a.Proxy, b.Proxy = proxy("http://proxy:3128"), proxy("http://proxy:3128")
		if !clusters.EqualConfigs(a, b) {
			t.Fatal("two functions choosing the same proxy compare different")
		}
		b.Proxy = proxy("http://other:3128")
		if clusters.EqualConfigs(a, b) {
			t.Fatal("different proxies compare equal")
		}
	})
	t.Run("nil", func(t *testing.T) {
		if !clusters.EqualConfigs(nil, nil) || clusters.EqualConfigs(base(), nil) {
			t.Fatal("nil handling is wrong")
		}
	})
}
