// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package builder_test

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	mcbuilder "mcr.dev/core/builder"
	mchandler "mcr.dev/core/handler"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
	mcreconcile "mcr.dev/core/reconcile"
)

// customRequest is a request type of the program's own.
type customRequest struct {
	cluster multicluster.ClusterName
	key     string
}

func (r customRequest) String() string                    { return string(r.cluster) + "/" + r.key }
func (r customRequest) Cluster() multicluster.ClusterName { return r.cluster }
func (r customRequest) WithCluster(c multicluster.ClusterName) customRequest {
	r.cluster = c
	return r
}

var noop = mcreconcile.Func(func(context.Context, mcreconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil })

var typedNoop = reconcile.TypedFunc[customRequest](func(context.Context, customRequest) (reconcile.Result, error) {
	return reconcile.Result{}, nil
})

// newManager returns a manager that is never started: building controllers needs none of its
// clusters to answer.
func newManager(t *testing.T) mcmanager.Manager {
	t.Helper()
	mgr, err := mcmanager.New(&rest.Config{Host: "https://127.0.0.1:1"}, nil, mcmanager.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return mgr
}

// Misuse fails Build with multicluster-runtime's error texts, checked in its order, so that a
// program ported from it fails the same way.
func TestMisuseIsRefusedAsUpstreamDoes(t *testing.T) {
	mgr := newManager(t)
	cases := []struct {
		name  string
		build func() error
		want  string
	}{
		{"nil reconciler", func() error {
			_, err := mcbuilder.ControllerManagedBy(mgr).For(&appsv1.ReplicaSet{}).Build(nil)
			return err
		}, "must provide a non-nil Reconciler"},
		{"nil manager", func() error {
			_, err := mcbuilder.ControllerManagedBy(nil).For(&appsv1.ReplicaSet{}).Build(noop)
			return err
		}, "must provide a non-nil Manager"},
		{"For twice", func() error {
			return mcbuilder.ControllerManagedBy(mgr).For(&appsv1.ReplicaSet{}).For(&appsv1.Deployment{}).Named("twice").Complete(noop)
		}, "For(...) should only be called once, could not assign multiple objects for reconciliation"},
		{"a second reconciler", func() error {
			return mcbuilder.ControllerManagedBy(mgr).For(&appsv1.ReplicaSet{}).Named("second").
				WithOptions(controller.TypedOptions[mcreconcile.Request]{Reconciler: noop}).Complete(noop)
		}, "reconciler was set via WithOptions() and via Build() or Complete()"},
		{"neither For nor Named", func() error {
			return mcbuilder.ControllerManagedBy(mgr).Watches(&appsv1.ReplicaSet{}, mchandler.EnqueueRequestForObject).Complete(noop)
		}, "one of For() or Named() must be called"},
		{"Owns without For", func() error {
			return mcbuilder.ControllerManagedBy(mgr).Named("owns").Owns(&appsv1.ReplicaSet{}).Complete(noop)
		}, "Owns() can only be used together with For()"},
		{"no watches", func() error {
			return mcbuilder.ControllerManagedBy(mgr).Named("nothing").Complete(noop)
		}, "there are no watches configured, controller will never get triggered. Use For(), Owns(), Watches() or WatchesRawSource() to set them up"},
		{"For with a custom request type", func() error {
			return mcbuilder.TypedControllerManagedBy[customRequest](mgr).For(&appsv1.ReplicaSet{}).Named("typed-for").Complete(typedNoop)
		}, "For() can only be used with mcreconcile.Request, got builder_test.customRequest"},
		{"Owns with a custom request type", func() error {
			return mcbuilder.TypedControllerManagedBy[customRequest](mgr).Named("typed-owns").Owns(&appsv1.ReplicaSet{}).Complete(typedNoop)
		}, "Owns() can only be used together with For()"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.build()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// What upstream allows, ours does too: Owns of the For type, a controller without For, several
// controllers for one kind, and a custom request type with Watches.
func TestWhatUpstreamAllows(t *testing.T) {
	mgr := newManager(t)
	if err := mcbuilder.ControllerManagedBy(mgr).For(&appsv1.ReplicaSet{}).Owns(&appsv1.ReplicaSet{}).Complete(noop); err != nil {
		t.Errorf("For and Owns: %v", err)
	}
	if err := mcbuilder.ControllerManagedBy(mgr).Named("replicasets-again").For(&appsv1.ReplicaSet{}).Complete(noop); err != nil {
		t.Errorf("a second controller for the kind: %v", err)
	}
	if err := mcbuilder.ControllerManagedBy(mgr).Named("without-for").Watches(&appsv1.Deployment{}, mchandler.EnqueueRequestForObject).Complete(noop); err != nil {
		t.Errorf("Watches without For: %v", err)
	}
	mapper := mchandler.TypedEnqueueRequestsFromMapFunc[client.Object, customRequest](func(_ context.Context, o client.Object) []customRequest {
		return []customRequest{{key: o.GetName()}}
	})
	if err := mcbuilder.TypedControllerManagedBy[customRequest](mgr).Named("typed-watches").Watches(&appsv1.Deployment{}, mapper).Complete(typedNoop); err != nil {
		t.Errorf("custom request type with Watches: %v", err)
	}
}
