// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusters_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/clusters"
	"mcr.dev/core/envtest"
	"mcr.dev/core/internal/testcheck"
	"mcr.dev/core/multicluster"
)

// An index on a kind a cluster does not serve is parked on that cluster instead of failing
// IndexField (for an engaged cluster) or the Add (for a later one), shown by ParkedIndexes, and
// applied once the cluster serves the kind; clusters that serve it are indexed at once.
func TestIndexOnKindNotServedIsParked(t *testing.T) {
	ctx := t.Context()
	gvk := schema.GroupVersionKind{Group: fmt.Sprintf("idx%d.mcr.dev", time.Now().UnixNano()%1_000_000), Version: "v1", Kind: "Gadget"}
	installGadgets(t, "a", gvk)
	createGadget(t, "a", gvk, "g-a", "alice") // a serves the kind from here on
	cs := clusters.New(clusters.Options[cluster.Cluster]{ParkedRetryMax: time.Second})
	a, b := memberCluster(t, "a"), memberCluster(t, "b")
	if err := cs.Add(ctx, "a", a, nil); err != nil {
		t.Fatal(err)
	}
	defer cs.Remove("a")
	if err := cs.Add(ctx, "b", b, nil); err != nil {
		t.Fatal(err)
	}
	defer cs.Remove("b")

	byOwner := func(o client.Object) []string {
		owner, _, _ := unstructured.NestedString(o.(*unstructured.Unstructured).Object, "spec", "owner")
		return []string{owner}
	}
	if err := cs.IndexField(ctx, gadget(gvk), "spec.owner", byOwner); err != nil {
		t.Fatalf("IndexField must not fail for a cluster that does not serve the kind: %v", err)
	}
	// A cluster added later that does not serve the kind is added all the same.
	c := memberCluster(t, "b")
	if err := cs.Add(ctx, "c", c, nil); err != nil {
		t.Fatalf("adding a cluster that does not serve an indexed kind: %v", err)
	}
	defer cs.Remove("c")

	want := map[multicluster.ClusterName][]string{
		"b": {"field index spec.owner of v1 Gadget." + gvk.Group},
		"c": {"field index spec.owner of v1 Gadget." + gvk.Group},
	}
	if got := cs.ParkedIndexes(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("ParkedIndexes() = %v, want %v", got, want)
	}
	testcheck.WaitFor(t, "a's Gadget found through the index", func() bool { return indexedGadgets(t, a, gvk, "alice") == 1 })

	installGadgets(t, "b", gvk) // b and c are the same apiserver
	createGadget(t, "b", gvk, "g-b", "bob")
	testcheck.WaitFor(t, "b's Gadget found through the index in b and c", func() bool {
		return indexedGadgets(t, b, gvk, "bob") == 1 && indexedGadgets(t, c, gvk, "bob") == 1
	})
	if got := cs.ParkedIndexes(); len(got) != 0 {
		t.Fatalf("ParkedIndexes() = %v after the kind is served everywhere", got)
	}
}

func gadget(gvk schema.GroupVersionKind) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u
}

func installGadgets(t *testing.T, member string, gvk schema.GroupVersionKind) {
	t.Helper()
	crd := envtest.SchemalessCRD(gvk, "gadgets")
	cl, err := client.New(fleet.Member(member).Config(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.Create(t.Context(), crd); err != nil {
		t.Fatalf("installing the Gadget CRD in %s: %v", member, err)
	}
}

func createGadget(t *testing.T, member string, gvk schema.GroupVersionKind, name, owner string) {
	t.Helper()
	testcheck.WaitFor(t, "creating Gadget "+name+" in "+member, func() bool {
		// A fresh client each time: its REST mapper must not remember the kind unserved.
		cl, err := client.New(fleet.Member(member).Config(), client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		g := gadget(gvk)
		g.SetNamespace("default")
		g.SetName(name)
		g.Object["spec"] = map[string]any{"owner": owner}
		return cl.Create(t.Context(), g) == nil
	})
}

// indexedGadgets returns how many Gadgets the cluster's cache finds through the index, -1 while
// it cannot ask.
func indexedGadgets(t *testing.T, cl cluster.Cluster, gvk schema.GroupVersionKind, owner string) int {
	t.Helper()
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := cl.GetCache().List(t.Context(), list, client.MatchingFields{"spec.owner": owner}); err != nil {
		return -1
	}
	return len(list.Items)
}

func TestNotServed(t *testing.T) {
	gv := schema.GroupVersion{Group: "example.com", Version: "v1"}
	discoveryFailed := apiutil.ErrResourceDiscoveryFailed{gv: apierrors.NewNotFound(schema.GroupResource{}, "")}
	for _, tc := range []struct {
		err  error
		want string
		ok   bool
	}{
		{&meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: "example.com", Kind: "Widget"}, SearchedVersions: []string{"v1"}},
			"the cluster does not serve Widget.example.com in version v1", true},
		{fmt.Errorf("getting informer: %w", &meta.NoResourceMatchError{PartialResource: gv.WithResource("widgets")}),
			"the cluster does not serve widgets.example.com in version v1", true},
		{fmt.Errorf("getting informer: %w", &discoveryFailed),
			"the cluster does not serve the API group version example.com/v1", true},
		{errors.New("connection refused"), "", false},
		{nil, "", false},
	} {
		got, ok := clusters.NotServed(tc.err)
		if got != tc.want || ok != tc.ok {
			t.Errorf("NotServed(%v) = %q, %v; want %q, %v", tc.err, got, ok, tc.want, tc.ok)
		}
	}
}
