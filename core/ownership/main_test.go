// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package ownership_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	mcbuilder "mcr.dev/core/builder"
	"mcr.dev/core/envtest"
	"mcr.dev/core/internal/testcheck"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/ownership"
	"mcr.dev/core/providers/clusters"
	mcreconcile "mcr.dev/core/reconcile"
)

// fleet is shared by the tests of this package: "hub" is the manager's local cluster, where
// owners live; "east" and "west" are members, where their projections live.
var fleet *envtest.Fleet

func TestMain(m *testing.M) {
	envtest.Main(m, envtest.Options{Members: []string{"hub", "east", "west"}}, func(f *envtest.Fleet) error {
		fleet = f
		return nil
	})
}

// ownerKind is the kind of the owners of these tests: ConfigMaps of the hub (no CRD needed).
var ownerKind = schema.GroupKind{Kind: "ConfigMap"}

// ownerLabel selects the owners of one test, so that tests sharing the hub do not see each
// other's ConfigMaps as owners.
const ownerLabel = "test.ownership.mcr.dev/owner-of"

// testFleet is a manager hosted in the hub, with a provider whose members the test engages
// and disengages.
type testFleet struct {
	mgr      mcmanager.Manager
	provider *clusters.Provider
	ns       string
	hub      client.Client
	members  map[multicluster.ClusterName]client.Client
}

func newTestFleet(t *testing.T) *testFleet {
	t.Helper()
	f := &testFleet{
		provider: clusters.New(clusters.Options{Logger: logr.Discard()}),
		ns:       envtest.NamespaceForTest(t, "own", fleet.Members()...),
		hub:      fleet.Member("hub").ClientForTest(t, client.Options{}),
		members:  map[multicluster.ClusterName]client.Client{},
	}
	for _, name := range []string{"east", "west"} {
		f.members[multicluster.ClusterName(name)] = fleet.Member(name).ClientForTest(t, client.Options{})
		if err := f.provider.Add(t.Context(), multicluster.ClusterName(name), memberCluster(t, name)); err != nil {
			t.Fatal(err)
		}
	}
	mgr, err := mcmanager.New(fleet.Member("hub").Config(), f.provider, mcmanager.Options{
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Logger:                 logr.Discard(),
		// Every test adds a controller of the same name to its own manager.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	f.mgr = mgr
	return f
}

func memberCluster(t *testing.T, member string) cluster.Cluster {
	t.Helper()
	cl, err := cluster.New(fleet.Member(member).Config())
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// start runs the manager until the test ends and waits for both members to be engaged.
func (f *testFleet) start(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	testcheck.WaitFor(t, "east and west engaged", func() bool { return len(f.mgr.EngagedClusters()) == 2 })
}

// engage engages member again after disengage.
func (f *testFleet) engage(t *testing.T, member string) {
	t.Helper()
	if err := f.provider.Add(t.Context(), multicluster.ClusterName(member), memberCluster(t, member)); err != nil {
		t.Fatal(err)
	}
}

// projectingController is the controller of these tests: for every owner (a labeled
// ConfigMap of the hub) it writes a marked copy to every engaged member, and puts back copies
// changed or deleted there.
type projectingController struct {
	mgr     mcmanager.Manager
	tracker *ownership.Tracker

	mu         sync.Mutex
	reconciles map[string]int
}

// addController adds the projecting controller for the owners of the fleet's test to mgr.
func (f *testFleet) addController(t *testing.T, opts ownership.Options) *projectingController {
	t.Helper()
	opts.Projections = []client.ObjectList{&corev1.ConfigMapList{}}
	tracker, err := ownership.NewTracker(f.mgr, opts)
	if err != nil {
		t.Fatal(err)
	}
	r := &projectingController{mgr: f.mgr, tracker: tracker, reconciles: map[string]int{}}
	err = mcbuilder.ControllerManagedBy(f.mgr).
		Named("projecting").
		For(&corev1.ConfigMap{},
			mcbuilder.WithEngageWithLocalCluster(true), mcbuilder.WithEngageWithProviderClusters(false),
			mcbuilder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetLabels()[ownerLabel] == f.ns }))).
		Watches(&corev1.ConfigMap{}, ownership.EnqueueOwner(ownerKind), mcbuilder.WithEngageWithLocalCluster(false)).
		Complete(r)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *projectingController) Reconcile(ctx context.Context, req mcreconcile.Request) (mcreconcile.Result, error) {
	hub := r.mgr.GetLocalManager().GetClient()
	owner := &corev1.ConfigMap{}
	if err := hub.Get(ctx, req.NamespacedName, owner); err != nil {
		return mcreconcile.Result{}, client.IgnoreNotFound(err)
	}
	r.mu.Lock()
	r.reconciles[req.Name]++
	r.mu.Unlock()
	if !owner.DeletionTimestamp.IsZero() {
		return r.tracker.Finalize(ctx, req.ClusterName, owner)
	}
	members := r.mgr.EngagedClusters()
	if err := r.tracker.Track(ctx, req.ClusterName, owner, members...); err != nil {
		return mcreconcile.Result{}, err
	}
	ref, err := r.tracker.Owner(ctx, req.ClusterName, owner)
	if err != nil {
		return mcreconcile.Result{}, err
	}
	var errs []error
	for _, name := range members {
		cl, err := r.mgr.GetCluster(ctx, name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		copied := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: owner.Namespace, Name: owner.Name}}
		_, err = controllerutil.CreateOrUpdate(ctx, cl.GetClient(), copied, func() error {
			if err := ownership.SetOwner(copied, ref); err != nil {
				return err
			}
			copied.Data = maps.Clone(owner.Data)
			return nil
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("cluster %q: %w", name, err))
		}
	}
	return mcreconcile.Result{}, errors.Join(errs...)
}

func (r *projectingController) count(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reconciles[name]
}

// createOwner creates an owner in the hub.
func (f *testFleet) createOwner(t *testing.T, name string, data map[string]string) *corev1.ConfigMap {
	t.Helper()
	owner := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name, Labels: map[string]string{ownerLabel: f.ns}},
		Data:       data,
	}
	if err := f.hub.Create(t.Context(), owner); err != nil {
		t.Fatal(err)
	}
	return owner
}

// projection reads the copy of name in member; nil if there is none (or it is being deleted).
func (f *testFleet) projection(t *testing.T, member, name string) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{}
	err := f.members[multicluster.ClusterName(member)].Get(t.Context(), client.ObjectKey{Namespace: f.ns, Name: name}, cm)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	if !cm.DeletionTimestamp.IsZero() {
		return nil
	}
	return cm
}

// waitProjected waits until every member holds a copy of owner with its data, marked with it.
func (f *testFleet) waitProjected(t *testing.T, owner *corev1.ConfigMap, members ...string) {
	t.Helper()
	for _, member := range members {
		testcheck.WaitFor(t, "the copy of "+owner.Name+" in "+member, func() bool {
			cm := f.projection(t, member, owner.Name)
			if cm == nil || !maps.Equal(cm.Data, owner.Data) {
				return false
			}
			got, err := ownership.GetOwner(cm)
			return err == nil && got.UID == owner.UID && got.Cluster == mcmanager.LocalCluster && got.GroupKind() == ownerKind
		})
	}
}

// ownerGone reports whether the owner is deleted from the hub.
func (f *testFleet) ownerGone(t *testing.T, name string) bool {
	t.Helper()
	err := f.hub.Get(t.Context(), client.ObjectKey{Namespace: f.ns, Name: name}, &corev1.ConfigMap{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return apierrors.IsNotFound(err)
}

// counter returns the value of the counter name with labels from controller-runtime's registry.
func counter(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range families {
		if mf.GetName() != name {
			continue
		}
	metrics:
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if want, ok := labels[lp.GetName()]; ok && want != lp.GetValue() {
					continue metrics
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}
