// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	ctrlreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"mcr.dev/core/multicluster"
	"mcr.dev/core/reconcile"
)

func TestRequestString(t *testing.T) {
	nn := types.NamespacedName{Namespace: "ns", Name: "obj"}
	for _, tc := range []struct {
		req  reconcile.Request
		want string
	}{
		{reconcile.Request{Request: ctrlreconcile.Request{NamespacedName: nn}}, "ns/obj"},
		{reconcile.Request{Request: ctrlreconcile.Request{NamespacedName: nn}, ClusterName: "east"}, "cluster://east/ns/obj"},
	} {
		if got := tc.req.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}

func TestWithClusterKeepsTheRequest(t *testing.T) {
	r := reconcile.Request{Request: ctrlreconcile.Request{NamespacedName: types.NamespacedName{Name: "x"}}, ClusterName: "a"}
	moved := r.WithCluster("b")
	if moved.Cluster() != "b" || moved.Name != "x" || r.Cluster() != "a" {
		t.Fatalf("WithCluster: got %+v from %+v", moved, r)
	}

	type custom struct{ ID int }
	w := reconcile.WithCluster[custom]{Request: custom{ID: 7}}.WithCluster("c")
	if w.Cluster() != "c" || w.Request.ID != 7 || w.String() != "cluster://c/{7}" {
		t.Fatalf("generic WithCluster: got %+v (%s)", w, w.String())
	}
}

func TestClusterNotFoundWrapper(t *testing.T) {
	for _, tc := range []struct {
		name    string
		err     error
		result  ctrlreconcile.Result
		wantErr bool
		wantRes ctrlreconcile.Result
	}{
		{name: "not found ends quietly", err: fmt.Errorf("get: %w", multicluster.ErrClusterNotFound), result: ctrlreconcile.Result{RequeueAfter: 5}, wantRes: ctrlreconcile.Result{}},
		{name: "other errors pass", err: errors.New("boom"), wantErr: true},
		{name: "results pass", result: ctrlreconcile.Result{RequeueAfter: 5}, wantRes: ctrlreconcile.Result{RequeueAfter: 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := reconcile.NewClusterNotFoundWrapper[reconcile.Request](reconcile.Func(func(context.Context, reconcile.Request) (ctrlreconcile.Result, error) {
				return tc.result, tc.err
			}))
			res, err := w.Reconcile(context.Background(), reconcile.Request{})
			if (err != nil) != tc.wantErr || res != tc.wantRes {
				t.Fatalf("got (%+v, %v), want (%+v, error %v)", res, err, tc.wantRes, tc.wantErr)
			}
		})
	}
}
