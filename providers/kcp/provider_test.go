// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kcp_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/kcp-dev/logicalcluster/v3"
	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"

	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/kcp"
)

// configMap creates a ConfigMap in namespace default of a backend, in a logical cluster (or the
// backend's home cluster when cluster is empty).
func configMap(t *testing.T, backend string, cluster logicalcluster.Name, name string, data map[string]string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Data: data}
	if cluster != "" {
		cm.Annotations = map[string]string{logicalcluster.AnnotationKey: cluster.String()}
	}
	if err := backends[backend].Create(t.Context(), cm); err != nil {
		t.Fatalf("creating ConfigMap %s on %s: %v", name, backend, err)
	}
	t.Cleanup(func() { _ = backends[backend].Delete(context.Background(), cm) })
}

// listNames lists ConfigMaps in namespace default through a reader and returns their names.
func listNames(ctx context.Context, r client.Reader, opts ...client.ListOption) ([]string, error) {
	var list corev1.ConfigMapList
	if err := r.List(ctx, &list, append(opts, client.InNamespace("default"))...); err != nil {
		return nil, err
	}
	var names []string
	for _, cm := range list.Items {
		if cm.Name != "kube-root-ca.crt" {
			names = append(names, cm.Name)
		}
	}
	slices.Sort(names)
	return names, nil
}

// expectNames waits until the ConfigMaps listed through r are want.
func expectNames(t *testing.T, what string, r client.Reader, want []string, opts ...client.ListOption) {
	t.Helper()
	eventually(t, what, func() error {
		got, err := listNames(t.Context(), r, opts...)
		if err != nil {
			return err
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("listed %q, want %q", got, want)
		}
		return nil
	})
}

// TestEngagesLogicalClustersThroughSharedCache checks that each logical cluster of an endpoint
// is engaged under its kcp.io/cluster name with a client that writes to <url>/clusters/<name>
// and reads only its own objects from the endpoint's shared cache, and that the endpoint keeps
// one wildcard watch per type, however many logical clusters it serves.
func TestEngagesLogicalClustersThroughSharedCache(t *testing.T) {
	one := newLogicalCluster(t, "east", uniqueName(t, "one"), "")
	two := newLogicalCluster(t, "west", uniqueName(t, "two"), "")
	// Three logical clusters on one apiserver, as kcp puts many on one shard.
	three := newLogicalCluster(t, "east", uniqueName(t, "three"), "")
	configMap(t, "east", one.cluster, "cm-one", nil)
	configMap(t, "west", two.cluster, "cm-two", nil)
	configMap(t, "east", three.cluster, "cm-three", nil)
	configMap(t, "east", "", "cm-east-home", nil)

	s := start(t, newSlice(t, shardA.URL()), kcp.Options{})
	clusters := map[string]cluster.Cluster{}
	for _, b := range []binding{one, two, three} {
		clusters[b.cluster.String()] = s.waitEngaged(t, b.cluster).Cluster
	}
	for _, c := range []struct {
		b    binding
		want string
	}{{one, "cm-one"}, {two, "cm-two"}, {three, "cm-three"}} {
		cl := clusters[c.b.cluster.String()]
		if got, want := cl.GetConfig().Host, shardA.URL()+"/clusters/"+c.b.cluster.String(); got != want {
			t.Errorf("cluster %s talks to %s, want %s", c.b.cluster, got, want)
		}
		expectNames(t, "the cache of "+c.b.cluster.String()+" lists its own ConfigMaps only", cl.GetClient(), []string{c.want})
		live, err := listNames(t.Context(), cl.GetAPIReader())
		if err != nil || !slices.Equal(live, []string{c.want}) {
			t.Errorf("live list of %s = %q, %v; want %q", c.b.cluster, live, err, c.want)
		}
		cm := &corev1.ConfigMap{}
		if err := cl.GetClient().Get(t.Context(), client.ObjectKey{Namespace: "default", Name: c.want}, cm); err != nil {
			t.Errorf("Get %s through %s: %v", c.want, c.b.cluster, err)
		} else if got := logicalcluster.From(cm); got != c.b.cluster {
			t.Errorf("ConfigMap %s read through %s is annotated with cluster %q", c.want, c.b.cluster, got)
		}
		if err := cl.GetClient().Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "cm-east-home"}, cm); !apierrors.IsNotFound(err) {
			t.Errorf("Get of another logical cluster's ConfigMap through %s: %v, want NotFound", c.b.cluster, err)
		}
	}

	// A write through a logical cluster lands in that logical cluster, and only its cache sees it.
	created := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "written-by-one"}}
	if err := clusters[one.cluster.String()].GetClient().Create(t.Context(), created); err != nil {
		t.Fatalf("creating a ConfigMap through %s: %v", one.cluster, err)
	}
	t.Cleanup(func() { _ = backends["east"].Delete(context.Background(), created) })
	expectNames(t, "the cache of "+one.cluster.String()+" sees the write", clusters[one.cluster.String()].GetClient(), []string{"cm-one", "written-by-one"})
	expectNames(t, "the cache of "+three.cluster.String()+" does not", clusters[three.cluster.String()].GetClient(), []string{"cm-three"})

	// One informer per type for the whole endpoint: three logical clusters read ConfigMaps and
	// are watched through APIBindings, through one wildcard watch each.
	for _, resource := range []string{"configmaps", "apibindings.apis.kcp.io"} {
		eventually(t, "one wildcard watch of "+resource+" on shard A", func() error {
			if n := shardA.OpenWatches(resource); n != 1 {
				return fmt.Errorf("%d open wildcard watches of %s", n, resource)
			}
			return nil
		})
	}
}

// TestEventRecordersWriteToTheLogicalCluster checks that an engaged logical cluster's recorder
// (controller-runtime v0.25's recorder.EventRecorder, with annotated events) writes
// events.k8s.io Events into that logical cluster.
func TestEventRecordersWriteToTheLogicalCluster(t *testing.T) {
	one := newLogicalCluster(t, "east", uniqueName(t, "recorded"), "")
	configMap(t, "east", one.cluster, "noted", nil)
	s := start(t, newSlice(t, shardA.URL()), kcp.Options{})
	cl := s.waitEngaged(t, one.cluster).Cluster

	cm := &corev1.ConfigMap{}
	if err := cl.GetAPIReader().Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "noted"}, cm); err != nil {
		t.Fatal(err)
	}
	rec := cl.GetEventRecorder("kcp-test")
	rec.Eventf(cm, nil, corev1.EventTypeNormal, "Plain", "Testing", "recorded through %s", one.cluster)
	rec.AnnotatedEventf(cm, nil, map[string]string{"mcr.dev/test": "annotated"}, corev1.EventTypeNormal, "Annotated", "Testing", "recorded through %s", one.cluster)

	direct := clusterClient(t, "east", one.cluster)
	eventually(t, "both Events in the logical cluster", func() error {
		var list eventsv1.EventList
		if err := direct.List(t.Context(), &list, client.InNamespace(metav1.NamespaceDefault)); err != nil {
			return err
		}
		var plain, annotated bool
		for _, ev := range list.Items {
			if ev.Regarding.Name != "noted" || logicalcluster.From(&ev) != one.cluster {
				continue
			}
			plain = plain || ev.Reason == "Plain"
			annotated = annotated || (ev.Reason == "Annotated" && ev.Annotations["mcr.dev/test"] == "annotated")
		}
		if !plain || !annotated {
			return fmt.Errorf("plain Event recorded: %t, annotated Event recorded: %t, among %d Events", plain, annotated, len(list.Items))
		}
		return nil
	})
}

// TestIndexFieldOncePerEndpoint checks that field indexes, added before Start and while
// clusters are engaged, are added once to the endpoint's shared informer and keyed by logical
// cluster, so that an indexed List on a logical cluster returns its own objects only.
func TestIndexFieldOncePerEndpoint(t *testing.T) {
	one := newLogicalCluster(t, "east", uniqueName(t, "one"), "")
	two := newLogicalCluster(t, "east", uniqueName(t, "two"), "")
	configMap(t, "east", one.cluster, "idx-one", map[string]string{"k": "shared", "j": "a"})
	configMap(t, "east", two.cluster, "idx-two", map[string]string{"k": "shared", "j": "b"})
	byData := func(key string) client.IndexerFunc {
		return func(o client.Object) []string {
			if v, ok := o.(*corev1.ConfigMap).Data[key]; ok {
				return []string{v}
			}
			return nil
		}
	}

	s := start(t, newSlice(t, shardA.URL()), kcp.Options{})
	if err := s.provider.IndexField(t.Context(), &corev1.ConfigMap{}, "data.k", byData("k")); err != nil {
		t.Fatalf("IndexField before engagement: %v", err)
	}
	clOne := s.waitEngaged(t, one.cluster).Cluster
	clTwo := s.waitEngaged(t, two.cluster).Cluster
	if err := s.provider.IndexField(t.Context(), &corev1.ConfigMap{}, "data.j", byData("j")); err != nil {
		t.Fatalf("IndexField with clusters engaged: %v", err)
	}
	if err := s.provider.IndexField(t.Context(), &corev1.ConfigMap{}, "data.j", byData("j")); err != nil {
		t.Fatalf("IndexField of the same field again: %v", err)
	}
	// Each logical cluster applies the index to the shared informer once more; it is a no-op.
	if err := clOne.GetFieldIndexer().IndexField(t.Context(), &corev1.ConfigMap{}, "data.k", byData("k")); err != nil {
		t.Fatalf("IndexField through a logical cluster: %v", err)
	}

	expectNames(t, "indexed list on one", clOne.GetCache(), []string{"idx-one"}, client.MatchingFields{"data.k": "shared"})
	expectNames(t, "indexed list on two", clTwo.GetCache(), []string{"idx-two"}, client.MatchingFields{"data.k": "shared"})
	expectNames(t, "list by two indexes on two", clTwo.GetCache(), []string{"idx-two"}, client.MatchingFields{"data.k": "shared", "data.j": "b"})
	expectNames(t, "list by two indexes that do not match on two", clTwo.GetCache(), nil, client.MatchingFields{"data.k": "shared", "data.j": "a"})
	var list corev1.ConfigMapList
	if err := clOne.GetCache().List(t.Context(), &list, client.MatchingFields{"data.unknown": "x"}); err == nil {
		t.Error("List by a field that was never indexed succeeded, want an error")
	}
}

// TestDisengagesWhenLastBindingGoes checks that a logical cluster stays engaged while one of its
// bindings is left, is disengaged with the last one, and leaves no event handler behind on the
// endpoint's shared informers; it also checks readiness of the bindings.
func TestDisengagesWhenLastBindingGoes(t *testing.T) {
	first := newLogicalCluster(t, "west", uniqueName(t, "lc"), "")
	second := newBinding(t, "west", first.cluster, first.cluster.String()+"-second", "", true)
	s := start(t, newSlice(t, shardA.URL()), kcp.Options{})
	e := s.waitEngaged(t, first.cluster)

	inf, err := e.Cluster.GetCache().GetInformer(t.Context(), &corev1.ConfigMap{})
	if err != nil {
		t.Fatal(err)
	}
	var seen atomic.Int64
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(any) { seen.Add(1) }}); err != nil {
		t.Fatal(err)
	}
	if n := kcp.HandlerCount(e.Cluster); n != 1 {
		t.Errorf("HandlerCount = %d after adding one handler, want 1", n)
	}

	// An unready binding does not disengage while another one is ready.
	second.setReady(t, false)
	if err := first.delete(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.waitLog(t, `"cluster"="`+first.cluster.String()+`"`, "Disengaged cluster: none of its objects is ready")
	s.waitDisengaged(t, first.cluster, e)
	if n := kcp.HandlerCount(e.Cluster); n != 0 {
		t.Errorf("HandlerCount = %d after disengagement, want 0", n)
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{}); err == nil {
		t.Error("adding an event handler through a disengaged cluster succeeded, want an error")
	}

	// Ready again: engaged again, with a new instance.
	second.setReady(t, true)
	again := s.rec.WaitReengaged(t, s.provider, multicluster.ClusterName(first.cluster), e, waitTimeout)
	third := newBinding(t, "west", first.cluster, first.cluster.String()+"-third", "", true)
	s.waitLog(t, `"cluster"="`+first.cluster.String()+`"`, "Logical cluster stays engaged", `"objects"=2`)
	if err := second.delete(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.waitLog(t, `"cluster"="`+first.cluster.String()+`"`, "Logical cluster stays engaged", `"objects"=1`)
	if !again.Alive() {
		t.Fatal("the logical cluster was disengaged while one of its bindings was left")
	}
	if err := third.delete(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.waitDisengaged(t, first.cluster, again)
	s.waitLog(t, `"cluster"="`+first.cluster.String()+`"`, "Disengaged cluster: its last object is gone")
	if n := s.rec.Count(multicluster.ClusterName(first.cluster)); n != 2 {
		t.Errorf("engaged %d times, want 2", n)
	}
}

// TestEndpointsFollowSlice checks that endpoints appearing in the slice's status are watched and
// their logical clusters engaged, that a home logical cluster (one apiserver) is engaged under
// the apiserver's name, and that endpoints that disappear (or the whole slice) disengage their
// clusters and stop their wildcard caches.
func TestEndpointsFollowSlice(t *testing.T) {
	onA := newLogicalCluster(t, "east", uniqueName(t, "on-a"), "")
	// north's home cluster: an APIBinding without kcp.io/cluster on the apiserver of shard B.
	north := newBinding(t, "north", "north", uniqueName(t, "north-binding"), "", true)
	configMap(t, "north", "", "cm-north-home", nil)
	configMap(t, "north", logicalcluster.Name(uniqueName(t, "elsewhere")), "cm-north-other-cluster", nil)
	slice := newSlice(t, shardA.URL())
	s := start(t, slice, kcp.Options{})
	eA := s.waitEngaged(t, onA.cluster)
	if _, err := s.provider.Get(t.Context(), multicluster.ClusterName(north.cluster)); !errors.Is(err, multicluster.ErrClusterNotFound) {
		t.Errorf("Get(north) before shard B is listed: %v, want ErrClusterNotFound", err)
	}

	setEndpoints(t, slice, shardA.URL(), shardB.URL()+"/") // kcp may write a trailing slash
	eB := s.waitEngaged(t, north.cluster)
	expectNames(t, "north's home cluster reads north's own ConfigMaps", eB.Cluster.GetClient(), []string{"cm-north-home"})

	setEndpoints(t, slice, shardB.URL())
	s.waitDisengaged(t, onA.cluster, eA)
	s.waitLog(t, `"endpoint"="`+shardA.URL()+`"`, "Stopped watching endpoint")
	eventually(t, "shard A has no wildcard watch left", func() error {
		for _, r := range []string{"configmaps", "apibindings.apis.kcp.io"} {
			if n := shardA.OpenWatches(r); n != 0 {
				return fmt.Errorf("%d wildcard watches of %s still open", n, r)
			}
		}
		return nil
	})
	if !eB.Alive() {
		t.Error("the cluster of shard B was disengaged when shard A went")
	}

	if err := host.Delete(t.Context(), &apisv1alpha1.APIExportEndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: slice}}); err != nil {
		t.Fatal(err)
	}
	s.waitDisengaged(t, north.cluster, eB)
}

// TestBrokenEndpointDoesNotStopOthers checks that an endpoint that cannot be watched, an object
// without a logical cluster and a logical cluster that cannot be engaged are reported (log with
// the endpoint or cluster, metric, Event on the slice) while everything else is engaged.
func TestBrokenEndpointDoesNotStopOthers(t *testing.T) {
	good := newLogicalCluster(t, "west", uniqueName(t, "good"), "")
	refused := newLogicalCluster(t, "west", uniqueName(t, "refused"), "")
	invalid := newBinding(t, "west", "Not_A_Cluster", uniqueName(t, "invalid"), "", true)
	broken := "https://127.0.0.1:1/services/apiexport/root/" + exportName
	slice := newSlice(t, broken, shardA.URL())
	brokenBefore := testutil.ToFloat64(kcp.BrokenEndpoints)

	rec := providertest.NewRecorder()
	rec.FailEngage(func(name multicluster.ClusterName) error {
		if name == multicluster.ClusterName(refused.cluster) {
			return errors.New("refused by the test")
		}
		return nil
	})
	s := startWith(t, slice, kcp.Options{}, rec)

	s.waitEngaged(t, good.cluster)
	s.waitLog(t, `"endpoint"="`+broken+`"`, "Endpoint cannot be engaged")
	s.waitLog(t, `"cluster"="`+refused.cluster.String()+`"`, "Logical cluster cannot be engaged", "refused by the test")
	s.waitLog(t, "Ignoring an object without a valid kcp.io/cluster annotation", `"object"="`+invalid.name+`"`)
	if got := testutil.ToFloat64(kcp.BrokenEndpoints); got < brokenBefore+1 {
		t.Errorf("BrokenEndpoints = %v, want at least %v", got, brokenBefore+1)
	}
	eventually(t, "a Warning Event on the slice", func() error {
		var list eventsv1.EventList
		if err := host.List(t.Context(), &list, client.InNamespace(metav1.NamespaceDefault)); err != nil {
			return err
		}
		for _, ev := range list.Items {
			if ev.Regarding.Name == slice && ev.Reason == kcp.ReasonEndpointUnavailable && ev.Type == corev1.EventTypeWarning &&
				strings.Contains(ev.Note, broken) {
				return nil
			}
		}
		return fmt.Errorf("no %s Event for slice %s among %d Events", kcp.ReasonEndpointUnavailable, slice, len(list.Items))
	})
	// The refused cluster is retried and engaged once the manager accepts it.
	s.rec.FailEngage(nil)
	s.waitEngaged(t, refused.cluster)
}

// TestGetByPath checks the path-aware lookup: a workspace path from kcp.io/path leads to the
// engaged logical cluster, also a path that is the logical cluster's name, and a path is
// forgotten with its cluster.
func TestGetByPath(t *testing.T) {
	path := "root:org:" + uniqueName(t, "team")
	lc := newLogicalCluster(t, "east", uniqueName(t, "lc"), path)
	s := start(t, newSlice(t, shardA.URL()), kcp.Options{})
	e := s.waitEngaged(t, lc.cluster)

	cl, err := s.provider.GetByPath(t.Context(), logicalcluster.NewPath(path))
	if err != nil || cl != e.Cluster {
		t.Fatalf("GetByPath(%s) = %p, %v; want the engaged cluster %p", path, cl, err, e.Cluster)
	}
	if name, ok := s.provider.ClusterNameForPath(logicalcluster.NewPath(path)); !ok || name != multicluster.ClusterName(lc.cluster) {
		t.Errorf("ClusterNameForPath(%s) = %q, %t", path, name, ok)
	}
	if cl, err := s.provider.GetByPath(t.Context(), lc.cluster.Path()); err != nil || cl != e.Cluster {
		t.Errorf("GetByPath(the cluster's name) = %p, %v", cl, err)
	}
	if _, err := s.provider.GetByPath(t.Context(), logicalcluster.NewPath("root:org:unknown")); !errors.Is(err, multicluster.ErrClusterNotFound) {
		t.Errorf("GetByPath(unknown) = %v, want ErrClusterNotFound", err)
	}
	if err := lc.delete(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.waitDisengaged(t, lc.cluster, e)
	eventually(t, "the path is forgotten", func() error {
		if _, ok := s.provider.ClusterNameForPath(logicalcluster.NewPath(path)); ok {
			return errors.New("still known")
		}
		return nil
	})
}

// TestStartFailsWithoutEndpointSliceAPI checks that Start fails with a clear error when the
// config does not point at a kcp workspace (no apis.kcp.io), that Start runs only once, and that
// New refuses what it cannot use.
func TestStartFailsWithoutEndpointSliceAPI(t *testing.T) {
	p, err := kcp.New(fleet.Member("east").Config(), "widgets", kcp.Options{Options: kit.Options{CacheSyncTimeout: 10 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	err = p.Start(t.Context(), providertest.NewRecorder())
	if err == nil || !strings.Contains(err.Error(), "apis.kcp.io") {
		t.Errorf("Start without the APIExportEndpointSlice API: %v, want an error naming apis.kcp.io", err)
	}
	if err := p.Start(t.Context(), providertest.NewRecorder()); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("second Start: %v, want an error", err)
	}
	if _, err := kcp.New(nil, "widgets", kcp.Options{}); err == nil {
		t.Error("New(nil config) succeeded")
	}
	if _, err := kcp.New(providerConfig(), "", kcp.Options{}); err == nil {
		t.Error("New without a slice name succeeded")
	}
	withClusterOptions := kcp.Options{Options: kit.Options{ClusterOptions: []cluster.Option{func(*cluster.Options) {}}}}
	if _, err := kcp.New(providerConfig(), "widgets", withClusterOptions); err == nil || !strings.Contains(err.Error(), "ClusterOptions") {
		t.Errorf("New with ClusterOptions: %v, want an error naming them", err)
	}
}
