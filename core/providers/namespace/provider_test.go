// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package namespace

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/internal/testcheck"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
)

func TestNamespacesAreEngagedAndDisengaged(t *testing.T) {
	host := startHost(t)
	p, aware := startProvider(t, host)

	// Namespaces that exist before Start are engaged too.
	testcheck.WaitFor(t, "kube-system to be engaged", func() bool { return engaged(aware, "kube-system") != nil })

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
	testcheck.WaitFor(t, "the terminating namespace to be disengaged", func() bool { return engaged(aware, clusterName) == nil })
	if _, err := p.Get(t.Context(), clusterName); !errors.Is(err, multicluster.ErrClusterNotFound) {
		t.Fatalf("Get after disengage: %v", err)
	}

	// Once gone for good, the same name can come back, as a new cluster.
	removeNamespace(t, name)
	testcheck.WaitFor(t, "the namespace to be gone from the cache", func() bool {
		var ns corev1.Namespace
		return host.GetCache().Get(t.Context(), client.ObjectKey{Name: name}, &ns) != nil
	})
	if err := host.GetClient().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	testcheck.WaitFor(t, "the re-created namespace to be engaged", func() bool { return engaged(aware, clusterName) != nil })
	if engaged(aware, clusterName) == cl {
		t.Fatal("a re-created namespace reused the old cluster")
	}
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
	testcheck.WaitFor(t, "the index to find exactly the namespace's own object", func() bool {
		var list corev1.ConfigMapList
		if err := a.GetCache().List(t.Context(), &list, client.MatchingFields{"color": "red"}); err != nil {
			t.Fatal(err)
		}
		return len(list.Items) == 1 && list.Items[0].Namespace == InnerNamespace
	})
}

// A namespace the manager refuses to engage is retried with backoff, without any change of the
// Namespace, and the fleet status names it until it is engaged.
func TestFailedEngageIsRetriedWithBackoff(t *testing.T) {
	host := startHost(t)
	name := multicluster.ClusterName(uniqueName("flaky"))
	aware := providertest.NewRecorder()
	var refuse atomic.Bool
	refuse.Store(true)
	aware.FailEngage(func(n multicluster.ClusterName) error {
		if n == name && refuse.Load() {
			return errors.New("controllers cannot start here")
		}
		return nil
	})
	p := startProviderWith(t, newProvider(host, kit.Options{RetryMinDelay: 20 * time.Millisecond, RetryMaxDelay: 100 * time.Millisecond}), aware)

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: string(name)}}
	if err := host.GetClient().Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	testcheck.WaitFor(t, "the refused engage to be retried twice", func() bool { return aware.Count(name) >= 3 && p.FleetStatus().Listed })
	if got := p.FleetStatus().Failing[name]; !strings.Contains(got, "controllers cannot start here") {
		t.Fatalf("FleetStatus().Failing[%q] = %q, want the refusal", name, got)
	}
	var now corev1.Namespace
	if err := host.GetAPIReader().Get(t.Context(), client.ObjectKey{Name: string(name)}, &now); err != nil {
		t.Fatal(err)
	}
	if now.ResourceVersion != ns.ResourceVersion {
		t.Fatalf("the Namespace changed (resourceVersion %s, created as %s): the retries may have come from its update", now.ResourceVersion, ns.ResourceVersion)
	}

	refuse.Store(false)
	aware.WaitEngaged(t, p, name, 30*time.Second)
	if got, failing := p.FleetStatus().Failing[name]; failing {
		t.Fatalf("engaged, and still failing in the fleet status: %q", got)
	}
}
