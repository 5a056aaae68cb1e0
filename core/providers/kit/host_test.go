// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kit_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	toolscache "k8s.io/client-go/tools/cache"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/clusters"
	"mcr.dev/core/envtest"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
)

// failingHost is a host cluster whose Start fails at once.
type failingHost struct {
	cluster.Cluster
	err error
}

func (h failingHost) Start(context.Context) error { return h.err }

func TestRunHostEndsWithTheHostsError(t *testing.T) {
	errBoom := errors.New("boom")
	h := kit.RunHost(context.Background(), "test provider", failingHost{err: errBoom})
	defer h.Stop()
	select {
	case <-h.Context().Done():
	case <-time.After(30 * time.Second):
		t.Fatal("Context did not end when the host stopped")
	}
	err := h.Err()
	if !errors.Is(err, context.Cause(h.Context())) || !strings.Contains(err.Error(), "test provider: the host cluster stopped: boom") {
		t.Errorf("Err() = %v, want the provider named and the host's error", err)
	}
}

func TestRunHostWithoutHostEndsWithoutError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	h := kit.RunHost(ctx, "test provider", nil)
	cancel()
	<-h.Context().Done()
	h.Stop()
	if err := h.Err(); err != nil {
		t.Errorf("Err() = %v after the parent context ended, want nil", err)
	}
}

// names counts the syncs of each key.
type names struct {
	mu  sync.Mutex
	set map[string]int
}

func (n *names) sync(_ context.Context, key string) kit.Result {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.set[key]++
	return kit.Result{}
}

func (n *names) count(name string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.set[name]
}

// configMapNames maps a ConfigMap to its name.
func configMapNames(o client.Object) []string { return []string{o.GetName()} }

func TestHostObjectsAgainstAPIServer(t *testing.T) {
	fleet := envtest.StartForTest(t, "host")
	cfg := fleet.Member("host").Config()
	host, err := cluster.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	existing := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "existing"}}
	if err := c.Create(ctx, existing); err != nil {
		t.Fatal(err)
	}

	seen := &names{set: map[string]int{}}
	started := make(chan struct{})
	var set clusters.Clusters[cluster.Cluster]
	e, err := kit.NewEngine(kit.EngineOptions[string]{
		Name:     "test-provider",
		Clusters: &set,
		Sync:     seen.sync,
		Host:     host,
		RunHost:  true,
		Sources: []kit.Source[string]{
			kit.HostObjects[string]{Informers: host.GetCache(), Watches: []kit.Watch[string]{{Object: &corev1.ConfigMap{}, Keys: configMapNames}}},
			startedSource{started},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- e.Run(runCtx, nil) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	select {
	case <-started:
	case err := <-done:
		t.Fatalf("Run ended early: %v", err)
	}
	created := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "created"}}
	if err := c.Create(ctx, created); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, created); err != nil {
		t.Fatal(err)
	}
	providertest.Eventually(t, time.Minute, "existing synced, created and deleted ConfigMap synced", func() error {
		if seen.count("existing") == 0 || seen.count("created") == 0 {
			return errors.New("not yet")
		}
		return nil
	})
}

// startedSource closes its channel when it starts, after the sources before it.
type startedSource struct{ c chan struct{} }

func (s startedSource) Start(context.Context, *kit.Engine[string]) (func(), error) {
	close(s.c)
	return func() {}, nil
}

func TestHostObjectsNamesWhatIsMissing(t *testing.T) {
	fleet := envtest.StartForTest(t, "host")
	// A scheme without the watched type: the informer cannot be made.
	host, err := cluster.New(fleet.Member("host").Config(), func(o *cluster.Options) { o.Scheme = runtime.NewScheme() })
	if err != nil {
		t.Fatal(err)
	}
	var set clusters.Clusters[cluster.Cluster]
	e, err := kit.NewEngine(kit.EngineOptions[string]{
		Name:     "test-provider",
		Clusters: &set,
		Sync:     (&names{set: map[string]int{}}).sync,
		Host:     host,
		RunHost:  true,
		Sources: []kit.Source[string]{kit.HostObjects[string]{Informers: host.GetCache(), Watches: []kit.Watch[string]{{
			Object:       &corev1.ConfigMap{},
			Kind:         "ConfigMap",
			Keys:         configMapNames,
			InformerHint: "is the type in the host's scheme?",
		}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	err = e.Run(t.Context(), nil)
	if err == nil || !strings.Contains(err.Error(), "test provider: getting the host's informer for ConfigMap (is the type in the host's scheme?)") {
		t.Errorf("Run error = %v, want the provider, kind and hint named", err)
	}
}

func TestObjectOfUnwrapsTombstones(t *testing.T) {
	cm := testObject()
	for _, in := range []any{cm, toolscacheTombstone(cm)} {
		if o, ok := kit.ObjectOf(in); !ok || o.GetName() != "a" {
			t.Errorf("ObjectOf(%T) = %v, %v", in, o, ok)
		}
	}
	if _, ok := kit.ObjectOf("not an object"); ok {
		t.Error("ObjectOf accepted a string")
	}
}

func toolscacheTombstone(obj client.Object) any {
	return toolscache.DeletedFinalStateUnknown{Key: "ns/a", Obj: obj}
}

// The host a provider runs itself comes back from an outage at once: its watches are restarted
// as soon as it answers again (as members' are), so a change made right after the host's return
// is synced within seconds instead of on client-go's watch backoff (up to a minute after an
// outage this long).
func TestOwnHostWatchesComeBackAtOnce(t *testing.T) {
	fleet := envtest.StartForTest(t, "host")
	member := fleet.Member("host")
	host, err := cluster.New(member.Config())
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	c, err := client.New(member.Config(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	seen := &names{set: map[string]int{}}
	started := make(chan struct{})
	var set clusters.Clusters[cluster.Cluster]
	e, err := kit.NewEngine(kit.EngineOptions[string]{
		Name:     "test-provider",
		Clusters: &set,
		Sync:     seen.sync,
		Host:     host,
		RunHost:  true,
		Sources: []kit.Source[string]{
			kit.HostObjects[string]{Informers: host.GetCache(), Watches: []kit.Watch[string]{{Object: &corev1.ConfigMap{}, Keys: configMapNames}}},
			startedSource{started},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- e.Run(runCtx, nil) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	<-started

	if err := member.Stop(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(25 * time.Second)
	if err := member.Start(ctx); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "after-the-outage"}}); err != nil {
		t.Fatal(err)
	}
	providertest.Eventually(t, 15*time.Second, "the ConfigMap created after the host's return synced", func() error {
		if seen.count("after-the-outage") == 0 {
			return errors.New("not yet")
		}
		return nil
	})
	t.Logf("host back -> change synced: %s", time.Since(back).Round(time.Millisecond))
}

// TestGetHostObject reads a present object, a missing one and one of a type the host's scheme
// lacks, and checks what the Sync is told and what is logged for each.
func TestGetHostObject(t *testing.T) {
	fleet := envtest.StartForTest(t, "host")
	cfg := fleet.Member("host").Config()
	host, err := cluster.New(cfg, func(o *cluster.Options) { o.Scheme = clientgoscheme.Scheme })
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	go func() { _ = host.Start(ctx) }()
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "present"}}); err != nil {
		t.Fatal(err)
	}
	var logged strings.Builder
	var logMu sync.Mutex
	logger := funcr.New(func(prefix, args string) {
		logMu.Lock()
		defer logMu.Unlock()
		logged.WriteString(args + "\n")
	}, funcr.Options{})
	var set clusters.Clusters[cluster.Cluster]
	e, err := kit.NewEngine(kit.EngineOptions[string]{
		Name: "test-provider", Clusters: &set, Host: host, Options: kit.Options{Logger: logger},
		Sync: func(context.Context, string) kit.Result { return kit.Result{} },
	})
	if err != nil {
		t.Fatal(err)
	}
	gone := kit.Result{After: time.Hour, Reason: "Gone"}
	notFoundCalls := 0
	notFound := func() kit.Result { notFoundCalls++; return gone }

	cm := &corev1.ConfigMap{}
	providertest.Eventually(t, time.Minute, "the present ConfigMap read", func() error {
		res, ok := e.GetHostObject(ctx, host.GetCache(), client.ObjectKey{Namespace: "default", Name: "present"}, cm, "default/present", notFound)
		if !ok || res != (kit.Result{}) || cm.Name != "present" {
			return fmt.Errorf("GetHostObject = %+v, %v, object %q; want a zero Result, true and the object", res, ok, cm.Name)
		}
		return nil
	})
	if notFoundCalls != 0 {
		t.Fatalf("notFound called %d times for a present object", notFoundCalls)
	}

	res, ok := e.GetHostObject(ctx, host.GetCache(), client.ObjectKey{Namespace: "default", Name: "missing"}, &corev1.ConfigMap{}, "default/missing", notFound)
	if ok || res != gone || notFoundCalls != 1 {
		t.Errorf("missing object: GetHostObject = %+v, %v after %d notFound calls; want notFound's Result, false, 1 call", res, ok, notFoundCalls)
	}

	unknown := &metav1.PartialObjectMetadata{}
	unknown.SetGroupVersionKind(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"})
	res, ok = e.GetHostObject(ctx, host.GetCache(), client.ObjectKey{Name: "w"}, unknown, "w", notFound)
	if ok || !res.Retry || notFoundCalls != 1 {
		t.Errorf("unreadable type: GetHostObject = %+v, %v after %d notFound calls; want a retry, false, no more notFound calls", res, ok, notFoundCalls)
	}
	logMu.Lock()
	out := logged.String()
	logMu.Unlock()
	for _, want := range []string{`"msg"="Reading from the host cache"`, `"cluster"="w"`, `"kind"="Widget"`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s:\n%s", want, out)
		}
	}
}
