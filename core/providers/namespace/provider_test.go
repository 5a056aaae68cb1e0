// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package namespace

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/multicluster"
)

func TestNamespacesAreEngagedAndDisengaged(t *testing.T) {
	host := startHost(t)
	p, aware := startProvider(t, host)

	// Namespaces that exist before Start are engaged too.
	waitFor(t, "kube-system to be engaged", func() bool { return aware.get("kube-system") != nil })

	cl := createNamespace(t, host, aware, "lifecycle")
	name := cl.HostNamespace()
	clusterName := multicluster.ClusterName(name)
	if got, err := p.Get(t.Context(), clusterName); err != nil || got != cl {
		t.Fatalf("Get = %v, %v", got, err)
	}
	if _, err := p.Get(t.Context(), "no-such-namespace"); !errors.Is(err, multicluster.ErrClusterNotFound) {
		t.Fatalf("Get of an unknown namespace: %v", err)
	}

	// Deleting a namespace sets its deletionTimestamp first: that already disengages it.
	if err := host.GetClient().Delete(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the terminating namespace to be disengaged", func() bool { return aware.get(clusterName) == nil })
	if _, err := p.Get(t.Context(), clusterName); !errors.Is(err, multicluster.ErrClusterNotFound) {
		t.Fatalf("Get after disengage: %v", err)
	}

	// Once gone for good, the same name can come back, as a new cluster.
	removeNamespace(t, name)
	waitFor(t, "the namespace to be gone from the cache", func() bool {
		var ns corev1.Namespace
		return host.GetCache().Get(t.Context(), client.ObjectKey{Name: name}, &ns) != nil
	})
	if err := host.GetClient().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the re-created namespace to be engaged", func() bool { return aware.get(clusterName) != nil })
	if aware.get(clusterName) == cl {
		t.Fatal("a re-created namespace reused the old cluster")
	}
}

func TestNamespaceTombstonesDisengage(t *testing.T) {
	host := startHost(t)
	p, aware := startProvider(t, host)
	a := multicluster.ClusterName(createNamespace(t, host, aware, "tomb-a").HostNamespace())
	b := multicluster.ClusterName(createNamespace(t, host, aware, "tomb-b").HostNamespace())

	// A tombstone carrying the last known object.
	p.onNamespaceDeleted(toolscache.DeletedFinalStateUnknown{Key: string(a), Obj: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: string(a)}}})
	// A tombstone with only the key.
	p.onNamespaceDeleted(toolscache.DeletedFinalStateUnknown{Key: string(b)})

	waitFor(t, "both namespaces to be disengaged", func() bool { return aware.get(a) == nil && aware.get(b) == nil })
}

func TestIndexFieldIsAppliedOnceToTheHost(t *testing.T) {
	host := startHost(t)
	p, aware := startProvider(t, host)
	byColor := func(o client.Object) []string { return []string{o.(*corev1.ConfigMap).Data["color"]} }
	if err := p.IndexField(t.Context(), &corev1.ConfigMap{}, "color", byColor); err != nil {
		t.Fatal(err)
	}
	a := createNamespace(t, host, aware, "index-a")
	b := createNamespace(t, host, aware, "index-b")
	// Through a namespace-cluster's indexer, and again through the provider: both no-ops that
	// would be indexer conflicts if they reached the host cache again.
	if err := a.GetFieldIndexer().IndexField(t.Context(), &corev1.ConfigMap{}, "color", byColor); err != nil {
		t.Fatal(err)
	}
	if err := p.IndexField(t.Context(), &corev1.ConfigMap{}, "color", byColor); err != nil {
		t.Fatal(err)
	}

	for _, cl := range []*Cluster{a, b} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "colored"}, Data: map[string]string{"color": "red"}}
		if err := cl.GetClient().Create(t.Context(), cm); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the index to find exactly the namespace's own object", func() bool {
		var list corev1.ConfigMapList
		if err := a.GetCache().List(t.Context(), &list, client.MatchingFields{"color": "red"}); err != nil {
			t.Fatal(err)
		}
		return len(list.Items) == 1 && list.Items[0].Namespace == InnerNamespace
	})
}
