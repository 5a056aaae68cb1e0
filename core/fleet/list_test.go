// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/fleet"
	"mcr.dev/core/internal/testcheck"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/clusters"
)

const imageField = "data.image"

func indexImage(obj client.Object) []string {
	return []string{obj.(*corev1.ConfigMap).Data["image"]}
}

// A fleet-wide List with a field index across three members, one of them down, returns the
// other members' objects and a *PartialError naming the down one, and returns although the
// down member never answers: whether the reader asks its API server (CheckReachable, the API
// reader) or waits for an informer that cannot sync (bounded by ClusterTimeout).
func TestListWithOneMemberDown(t *testing.T) {
	ns := namespace(t, "a", "b", "c")
	for _, m := range []string{"a", "b", "c"} {
		create(t, m, configMap(ns, "old", map[string]string{"app": "web"}, map[string]string{"image": "v1.2"}))
		create(t, m, configMap(ns, "new", map[string]string{"app": "web"}, map[string]string{"image": "v1.3"}))
		create(t, m, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s"}})
	}
	mgr := newManager(t, newProvider(t, "a", "b", "c"))
	if err := mgr.GetFieldIndexer().IndexField(t.Context(), &corev1.ConfigMap{}, imageField, indexImage); err != nil {
		t.Fatal(err)
	}
	checked := newReader(t, mgr, fleet.Options{CheckReachable: true})
	quick := newReader(t, mgr, fleet.Options{ClusterTimeout: 2 * time.Second})
	direct := newReader(t, mgr, fleet.Options{UseAPIReader: true})
	runManager(t, mgr, "a", "b", "c")
	ctx := t.Context()

	oldImage := client.MatchingFields{imageField: "v1.2"}
	waitForItems(t, checked, &corev1.ConfigMapList{}, []string{"a/old", "b/old", "c/old"}, client.InNamespace(ns), oldImage)
	// a's and b's Secret informers have synced; c's does not exist yet.
	waitForItems(t, quick, &corev1.SecretList{}, []string{"a/s", "b/s"}, client.InNamespace(ns), fleet.InClusters{"a", "b"})

	stopMember(t, members.Member("c"))

	t.Run("cache read with CheckReachable", func(t *testing.T) {
		items, err := returns(t, "List", func() ([]fleet.Item[*corev1.ConfigMap], error) {
			return fleet.ListItems[*corev1.ConfigMap](ctx, checked, &corev1.ConfigMapList{}, client.InNamespace(ns), oldImage)
		})
		wantDown(t, err, "listing *v1.ConfigMapList", "the API server does not answer")
		if got, want := keys(items), []string{"a/old", "b/old"}; !slices.Equal(got, want) {
			t.Fatalf("listed %q, want %q", got, want)
		}
	})

	t.Run("informer that cannot sync", func(t *testing.T) {
		items, err := returns(t, "List", func() ([]fleet.Item[*corev1.Secret], error) {
			return fleet.ListItems[*corev1.Secret](ctx, quick, &corev1.SecretList{}, client.InNamespace(ns))
		})
		wantDown(t, err, "listing *v1.SecretList", "no answer within 2s")
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%v does not wrap context.DeadlineExceeded", err)
		}
		if got, want := keys(items), []string{"a/s", "b/s"}; !slices.Equal(got, want) {
			t.Fatalf("listed %q, want %q", got, want)
		}
	})

	t.Run("API reader", func(t *testing.T) {
		list := &corev1.ConfigMapList{}
		_, err := returns(t, "List", func() (struct{}, error) {
			return struct{}{}, direct.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{"app": "web"})
		})
		wantDown(t, err, "listing *v1.ConfigMapList", "connection refused")
		var names []string
		for _, cm := range list.Items {
			names = append(names, cm.Name)
		}
		if want := []string{"new", "old", "new", "old"}; !slices.Equal(names, want) {
			t.Fatalf("listed %q, want %q (a's, then b's)", names, want)
		}
	})
}

// wantDown fails unless err is a *PartialError of action that names c, and only c, with a
// reason containing why.
func wantDown(t *testing.T, err error, action, why string) {
	t.Helper()
	partial, ok := errors.AsType[*fleet.PartialError](err)
	if !ok {
		t.Fatalf("error %v is not a *fleet.PartialError", err)
	}
	if got := partial.Failed(); !slices.Equal(got, []multicluster.ClusterName{"c"}) || partial.Clusters != 3 || partial.Action != action {
		t.Fatalf("%s failed in %q of %d clusters, want %s failing in c of 3", partial.Action, got, partial.Clusters, action)
	}
	if msg := err.Error(); !strings.Contains(msg, `cluster "c": `) || !strings.Contains(msg, why) {
		t.Fatalf("error %q does not name cluster c with %q", msg, why)
	}
}

// List's options: namespaces, label selectors (field selectors are in
// TestListWithOneMemberDown), InClusters, Limit, unstructured lists, the
// local cluster; and the typed helpers.
func TestListOptions(t *testing.T) {
	ns := namespace(t, "host", "a", "b", "c")
	for _, m := range []string{"a", "b", "c"} {
		create(t, m, configMap(ns, "web", map[string]string{"app": "web"}, nil))
		create(t, m, configMap(ns, "db", map[string]string{"app": "db"}, nil))
	}
	create(t, "host", configMap(ns, "web", map[string]string{"app": "web"}, nil))
	mgr := newManager(t, newProvider(t, "a", "b", "c"))
	r := newReader(t, mgr, fleet.Options{})
	withLocal := newReader(t, mgr, fleet.Options{IncludeLocal: true})
	runManager(t, mgr, "a", "b", "c")
	ctx := t.Context()
	inNS := client.InNamespace(ns)
	waitForItems(t, r, &corev1.ConfigMapList{}, []string{"a/db", "a/web", "b/db", "b/web", "c/db", "c/web"}, inNS)

	listed := func(t *testing.T, r *fleet.Reader, opts ...client.ListOption) []string {
		t.Helper()
		items, err := fleet.ListItems[*corev1.ConfigMap](ctx, r, &corev1.ConfigMapList{}, append(opts, inNS)...)
		if err != nil {
			t.Fatal(err)
		}
		return keys(items)
	}
	for _, tc := range []struct {
		name string
		opts []client.ListOption
		want []string
	}{
		{"sorted by cluster and name", nil, []string{"a/db", "a/web", "b/db", "b/web", "c/db", "c/web"}},
		{"label selector", []client.ListOption{client.MatchingLabels{"app": "web"}}, []string{"a/web", "b/web", "c/web"}},
		{"in clusters", []client.ListOption{fleet.InClusters{"c", "not-engaged"}, fleet.InClusters{"b"}}, []string{"b/db", "b/web", "c/db", "c/web"}},
		{"limit of the whole list", []client.ListOption{client.Limit(3)}, []string{"a/db", "a/web", "b/db"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := listed(t, r, tc.opts...); !slices.Equal(got, tc.want) {
				t.Fatalf("listed %q, want %q", got, tc.want)
			}
		})
	}

	t.Run("List", func(t *testing.T) {
		list := &corev1.ConfigMapList{}
		if err := r.List(ctx, list, inNS, client.MatchingLabels{"app": "db"}); err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 3 {
			t.Fatalf("listed %d ConfigMaps, want db of a, b and c", len(list.Items))
		}
	})

	t.Run("ListByCluster", func(t *testing.T) {
		byCluster, err := fleet.ListByCluster[*corev1.ConfigMap](ctx, r, &corev1.ConfigMapList{}, inNS, fleet.InClusters{"a", "b"})
		if err != nil {
			t.Fatal(err)
		}
		if len(byCluster) != 2 {
			t.Fatalf("listed clusters %v, want a and b", byCluster)
		}
		for _, name := range []multicluster.ClusterName{"a", "b"} {
			cms := byCluster[name]
			if len(cms) != 2 || cms[0].Name != "db" || cms[1].Name != "web" {
				t.Fatalf("cluster %s: listed %v, want db and web", name, cms)
			}
		}
	})

	t.Run("unstructured", func(t *testing.T) {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMapList"})
		items, err := fleet.ListItems[*unstructured.Unstructured](ctx, r, list, inNS, client.MatchingLabels{"app": "web"})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := keys(items), []string{"a/web", "b/web", "c/web"}; !slices.Equal(got, want) {
			t.Fatalf("listed %q, want %q", got, want)
		}
	})

	t.Run("local cluster", func(t *testing.T) {
		want := []string{"/web", "a/web", "b/web", "c/web"}
		testcheck.WaitFor(t, "the local cluster to take part", func() bool {
			return slices.Equal(listed(t, withLocal, client.MatchingLabels{"app": "web"}), want)
		})
		if got := listed(t, r, fleet.InClusters{mcmanager.LocalCluster}); len(got) != 0 {
			t.Fatalf("without IncludeLocal, the local cluster was listed: %q", got)
		}
	})

	t.Run("errors", func(t *testing.T) {
		if err := r.List(ctx, &corev1.ConfigMapList{}, inNS, client.Continue("token")); err == nil {
			t.Fatal("List with a continue token succeeded")
		}
		if _, err := fleet.ListItems[*corev1.Secret](ctx, r, &corev1.ConfigMapList{}, inNS); err == nil {
			t.Fatal("ListItems of Secrets from a ConfigMapList succeeded")
		}
	})
}

// A List reads at most MaxConcurrency clusters at a time: five clusters whose cache reads wait
// at a gate are read two at a time.
func TestListConcurrencyBound(t *testing.T) {
	ns := namespace(t, "a")
	create(t, "a", configMap(ns, "cm", nil, nil))
	g := &gate{open: make(chan struct{})}
	p := clusters.New(clusters.Options{Logger: logr.Discard()})
	names := []multicluster.ClusterName{"g1", "g2", "g3", "g4", "g5"}
	for _, name := range names {
		cl := newCluster(t, members.Member("a").Config())
		if err := p.Add(t.Context(), name, &gatedCluster{Cluster: cl, cache: &gatedCache{Cache: cl.GetCache(), gate: g}}); err != nil {
			t.Fatal(err)
		}
	}
	mgr := newManager(t, p)
	r := newReader(t, mgr, fleet.Options{MaxConcurrency: 2, ClusterTimeout: time.Hour})
	runManager(t, mgr, names...)
	waitForItems(t, r, &corev1.ConfigMapList{}, []string{"g1/cm", "g2/cm", "g3/cm", "g4/cm", "g5/cm"}, client.InNamespace(ns))
	g.closed.Store(true)

	type result struct {
		items []fleet.Item[*corev1.ConfigMap]
		err   error
	}
	done := make(chan result, 1)
	go func() {
		items, err := fleet.ListItems[*corev1.ConfigMap](t.Context(), r, &corev1.ConfigMapList{}, client.InNamespace(ns))
		done <- result{items, err}
	}()
	testcheck.WaitFor(t, "two cache reads at the gate", func() bool { return g.inFlight.Load() >= 2 })
	// A round trip to an API server gives reads beyond the bound time to show up.
	if err := memberClient(t, "a").List(t.Context(), &corev1.NamespaceList{}); err != nil {
		t.Fatal(err)
	}
	if most := g.most.Load(); most != 2 {
		t.Fatalf("%d cache reads ran at once, want MaxConcurrency (2)", most)
	}
	close(g.open)
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	if got, want := keys(res.items), []string{"g1/cm", "g2/cm", "g3/cm", "g4/cm", "g5/cm"}; !slices.Equal(got, want) {
		t.Fatalf("listed %q, want %q", got, want)
	}
	if most := g.most.Load(); most != 2 {
		t.Fatalf("%d cache reads ran at once, want MaxConcurrency (2)", most)
	}
}

// gatedCluster is a real cluster whose cache reads wait at a gate.
type gatedCluster struct {
	cluster.Cluster
	cache *gatedCache
}

func (c *gatedCluster) GetCache() cache.Cache { return c.cache }

type gatedCache struct {
	cache.Cache
	gate *gate
}

func (c *gatedCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := c.gate.pass(ctx); err != nil {
		return err
	}
	return c.Cache.List(ctx, list, opts...)
}

// gate holds reads while it is closed, until it opens, and counts how many it holds at once.
type gate struct {
	closed   atomic.Bool
	open     chan struct{}
	inFlight atomic.Int64
	most     atomic.Int64
}

func (g *gate) pass(ctx context.Context) error {
	if !g.closed.Load() {
		return nil
	}
	n := g.inFlight.Add(1)
	defer g.inFlight.Add(-1)
	for {
		most := g.most.Load()
		if n <= most || g.most.CompareAndSwap(most, n) {
			break
		}
	}
	select {
	case <-g.open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// waitForItems waits until a List of list's type with opts returns the objects want
// ("cluster/name"): an informer's first list may come from an API server's watch cache that has
// not seen the latest writes yet.
func waitForItems(t *testing.T, r *fleet.Reader, list client.ObjectList, want []string, opts ...client.ListOption) {
	t.Helper()
	testcheck.WaitFor(t, fmt.Sprintf("a List of %q", want), func() bool {
		items, err := fleet.ListItems[client.Object](t.Context(), r, list, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return slices.Equal(keys(items), want)
	})
}
