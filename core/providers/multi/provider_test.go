// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package multi_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/envtest"
	"mcr.dev/core/internal/testcheck"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/clusters"
	"mcr.dev/core/providers/multi"
	"mcr.dev/core/providers/nop"
	"mcr.dev/core/providers/providertest"
)

var fleet *envtest.Fleet

func TestMain(m *testing.M) {
	envtest.Main(m, envtest.Options{Members: []string{"a", "b"}}, func(f *envtest.Fleet) error {
		fleet = f
		return nil
	})
}

// engaged returns the cluster engaged under name, nil when none is.
func engaged(aware *providertest.Recorder, name multicluster.ClusterName) cluster.Cluster {
	if e, _ := aware.Latest(name); e.Alive() {
		return e.Cluster
	}
	return nil
}

func newCluster(t *testing.T, member string) cluster.Cluster {
	t.Helper()
	cl, err := cluster.New(fleet.Member(member).Config())
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// memberWith returns a clusters provider with one parked cluster.
func memberWith(t *testing.T, name multicluster.ClusterName, cl cluster.Cluster) *clusters.Provider {
	t.Helper()
	p := clusters.New(clusters.Options{})
	if err := p.Add(t.Context(), name, cl); err != nil {
		t.Fatal(err)
	}
	return p
}

func start(t *testing.T, p *multi.Provider, aware multicluster.Aware) (stop func()) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- p.Start(ctx, aware) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Start: %v", err)
		}
	}
}

func byColor(o client.Object) []string { return []string{o.(*corev1.ConfigMap).Data["color"]} }

func TestProvidersBeforeAndAfterStart(t *testing.T) {
	ctx := t.Context()
	p := multi.New(multi.Options{})
	aware := providertest.NewRecorder()

	// An index recorded before any member exists reaches every member's clusters.
	if err := p.IndexField(ctx, &corev1.ConfigMap{}, "color", byColor); err != nil {
		t.Fatal(err)
	}
	east := newCluster(t, "a")
	if err := p.AddProvider("east", memberWith(t, "c1", east)); err != nil {
		t.Fatal(err)
	}
	stop := start(t, p, aware)
	defer stop()
	testcheck.WaitFor(t, "east#c1 to be engaged", func() bool { return engaged(aware, "east#c1") == east })

	west := newCluster(t, "b")
	if err := p.AddProvider("west", memberWith(t, "c1", west)); err != nil {
		t.Fatal(err)
	}
	testcheck.WaitFor(t, "west#c1 to be engaged", func() bool { return engaged(aware, "west#c1") == west })

	if got := p.ProviderNames(); !slices.Equal(got, []string{"east", "west"}) {
		t.Fatalf("ProviderNames = %v", got)
	}
	if got, err := p.Get(ctx, "west#c1"); err != nil || got != west {
		t.Fatalf("Get west#c1 = %v, %v", got, err)
	}
	for _, name := range []multicluster.ClusterName{"c1", "north#c1", "west#c2"} {
		if _, err := p.Get(ctx, name); !errors.Is(err, multicluster.ErrClusterNotFound) {
			t.Errorf("Get %s: %v, want ErrClusterNotFound", name, err)
		}
	}

	// The index works on the member added after it was recorded.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "multi-index"}, Data: map[string]string{"color": "plum"}}
	if err := west.GetClient().Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = west.GetClient().Delete(context.Background(), cm) })
	testcheck.WaitFor(t, "the index to find the configmap", func() bool {
		var list corev1.ConfigMapList
		return west.GetCache().List(ctx, &list, client.MatchingFields{"color": "plum"}) == nil && len(list.Items) == 1
	})
	// Repeating an index is a no-op, not an indexer conflict.
	if err := p.IndexField(ctx, &corev1.ConfigMap{}, "color", byColor); err != nil {
		t.Fatal(err)
	}

	p.RemoveProvider("west")
	testcheck.WaitFor(t, "west#c1 to be disengaged", func() bool { return engaged(aware, "west#c1") == nil })
	if _, err := p.Get(ctx, "west#c1"); !errors.Is(err, multicluster.ErrClusterNotFound) {
		t.Fatalf("Get after RemoveProvider: %v", err)
	}
	if engaged(aware, "east#c1") != east {
		t.Fatal("removing west disengaged east")
	}
}

// selfContextProvider engages its cluster with a context of its own instead of Start's, the
// mistake multi's wrapping Aware guards against.
type selfContextProvider struct {
	nop.Provider
	cl       cluster.Cluster
	returned chan struct{}
}

func (p *selfContextProvider) Start(ctx context.Context, aware multicluster.Aware) error {
	defer close(p.returned)
	if err := aware.Engage(context.Background(), "only", p.cl); err != nil {
		return err
	}
	<-ctx.Done()
	return nil
}

func TestRemoveProviderDisengagesEverything(t *testing.T) {
	p := multi.New(multi.Options{Separator: "/"})
	aware := providertest.NewRecorder()
	stop := start(t, p, aware)
	defer stop()

	member := &selfContextProvider{cl: newCluster(t, "a"), returned: make(chan struct{})}
	if err := p.AddProvider("rogue", member); err != nil {
		t.Fatal(err)
	}
	testcheck.WaitFor(t, "rogue/only to be engaged", func() bool { return engaged(aware, "rogue/only") != nil })
	p.RemoveProvider("rogue")
	select {
	case <-member.returned:
	default:
		t.Fatal("RemoveProvider returned before the member's Start did")
	}
	testcheck.WaitFor(t, "rogue/only to be disengaged", func() bool { return engaged(aware, "rogue/only") == nil })
}

// indexRejecter fails every IndexField.
type indexRejecter struct{ nop.Provider }

func (indexRejecter) IndexField(context.Context, client.Object, string, client.IndexerFunc) error {
	return errors.New("no indexes here")
}

func TestIndexErrorsAreReturned(t *testing.T) {
	ctx := t.Context()
	p := multi.New(multi.Options{})
	if err := p.AddProvider("picky", &indexRejecter{}); err != nil {
		t.Fatal(err)
	}
	if err := p.AddProvider("fine", nop.New()); err != nil {
		t.Fatal(err)
	}
	err := p.IndexField(ctx, &corev1.ConfigMap{}, "color", byColor)
	if err == nil || !strings.Contains(err.Error(), `provider "picky"`) || strings.Contains(err.Error(), `provider "fine"`) {
		t.Fatalf("IndexField error = %v, want one naming only the failing member", err)
	}
	// A member added later that rejects a recorded index is not added.
	if err := p.AddProvider("picky2", &indexRejecter{}); err == nil {
		t.Fatal("AddProvider accepted a member that rejects a recorded index")
	}
	if _, ok := p.GetProvider("picky2"); ok {
		t.Fatal("the rejected member was kept")
	}
}

func TestAddProviderValidation(t *testing.T) {
	p := multi.New(multi.Options{})
	for _, prefix := range []string{"", "a#b"} {
		if err := p.AddProvider(prefix, nop.New()); err == nil {
			t.Errorf("AddProvider(%q) succeeded", prefix)
		}
	}
	if err := p.AddProvider("a", nop.New()); err != nil {
		t.Fatal(err)
	}
	if err := p.AddProvider("a", nop.New()); err == nil {
		t.Fatal("a duplicate prefix was accepted")
	}
	stop := start(t, p, providertest.NewRecorder())
	stop()
	if err := p.AddProvider("late", nop.New()); err == nil {
		t.Fatal("AddProvider succeeded after the multi provider stopped")
	}
}
