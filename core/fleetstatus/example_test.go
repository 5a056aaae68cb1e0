// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package fleetstatus_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	mcbuilder "mcr.dev/core/builder"
	"mcr.dev/core/fleetstatus"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
	mcreconcile "mcr.dev/core/reconcile"
)

// snippet:begin api-type

// Widget is a hub object: it lives in the host, the controller acts on it in every member, and
// its status says how each member is doing.
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   WidgetSpec   `json:"spec,omitempty"`
	Status WidgetStatus `json:"status,omitempty"`
}

// WidgetStatus holds the object's conditions (the summary condition among them) and, inline,
// the per-cluster conditions and counts.
type WidgetStatus struct {
	Conditions              []metav1.Condition `json:"conditions,omitempty"`
	fleetstatus.FleetStatus `json:",inline"`
}

// FleetStatus and StatusConditions make Widget a fleetstatus.Object.
func (w *Widget) FleetStatus() *fleetstatus.FleetStatus { return &w.Status.FleetStatus }
func (w *Widget) StatusConditions() *[]metav1.Condition { return &w.Status.Conditions }

// snippet:end api-type

// WidgetSpec is what every member gets.
type WidgetSpec struct {
	Color string `json:"color,omitempty"`
}

// WidgetList is a list of Widgets.
type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Widget `json:"items"`
}

var widgetGV = schema.GroupVersion{Group: "fleetstatus.mcr.dev", Version: "v1"}

func addWidgets(s *runtime.Scheme) error {
	s.AddKnownTypes(widgetGV, &Widget{}, &WidgetList{})
	metav1.AddToGroupVersion(s, widgetGV)
	return nil
}

// DeepCopyInto is what controller-gen writes for Widget; the embedded FleetStatus brings its
// own DeepCopyInto.
func (w *Widget) DeepCopyInto(out *Widget) {
	*out = *w
	w.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if w.Status.Conditions != nil {
		out.Status.Conditions = make([]metav1.Condition, len(w.Status.Conditions))
		for i := range w.Status.Conditions {
			w.Status.Conditions[i].DeepCopyInto(&out.Status.Conditions[i])
		}
	}
	w.FleetStatus().DeepCopyInto(out.FleetStatus())
}

func (w *Widget) DeepCopyObject() runtime.Object {
	out := &Widget{}
	w.DeepCopyInto(out)
	return out
}

func (l *WidgetList) DeepCopyObject() runtime.Object {
	out := &WidgetList{TypeMeta: l.TypeMeta}
	l.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]Widget, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}

// The status the results of four members make: one in sync, one refused by RBAC, one timed out
// and one still pending.
func ExampleAggregator_Set() {
	agg := fleetstatus.New(nil, fleetstatus.Options{}) // Set only computes: it needs no client
	w := &Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "settings", Generation: 2}}

	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "settings", errors.New("RBAC"))
	agg.Set(w, []fleetstatus.Result{
		fleetstatus.FromError("east-1", nil),
		fleetstatus.FromError("east-2", forbidden),
		fleetstatus.FromError("west-1", fmt.Errorf("writing ConfigMap demo/settings: %w", context.DeadlineExceeded)),
		{Cluster: "west-2", Status: metav1.ConditionUnknown, Reason: "Provisioning"},
	})

	summary := meta.FindStatusCondition(w.Status.Conditions, "FleetSynced")
	fmt.Println(summary.Status, summary.Reason, summary.Message)
	fmt.Printf("ready %d/%d\n", w.Status.ReadyClusters, w.Status.TotalClusters)
	for _, c := range w.Status.Clusters {
		fmt.Println(c.Cluster, c.Type, c.Status, c.Reason)
	}
	// Output:
	// False NotReady Synced 1/4, failing: east-2 (Forbidden), west-1 (Timeout), west-2 (Provisioning)
	// ready 1/4
	// east-1 Synced True Succeeded
	// east-2 Synced False Forbidden
	// west-1 Synced False Timeout
	// west-2 Synced Unknown Provisioning
}

// snippet:begin reconciler

// widgetReconciler acts on every member for a Widget of the host and reports in its status.
type widgetReconciler struct {
	mgr    mcmanager.Manager
	status *fleetstatus.Aggregator
}

func (r *widgetReconciler) Reconcile(ctx context.Context, req mcreconcile.Request) (reconcile.Result, error) {
	w := &Widget{}
	if err := r.mgr.GetLocalManager().GetClient().Get(ctx, req.NamespacedName, w); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	var results []fleetstatus.Result
	failed := false
	for _, name := range r.mgr.EngagedClusters() {
		if name == mcmanager.LocalCluster {
			continue // the host is no member
		}
		err := r.apply(ctx, name, w)
		failed = failed || err != nil
		results = append(results, fleetstatus.FromError(name, err))
	}
	res, err := r.status.Update(ctx, w, results)
	if err != nil {
		return reconcile.Result{}, err
	}
	if failed {
		// Retry the members that failed; Update may ask to come back sooner, to write a
		// deferred status.
		return fleetstatus.Sooner(res, reconcile.Result{RequeueAfter: 10 * time.Second}), nil
	}
	return res, nil
}

// snippet:end reconciler

// apply does the controller's work for w in one member.
func (r *widgetReconciler) apply(ctx context.Context, name multicluster.ClusterName, _ *Widget) error {
	_, err := r.mgr.GetCluster(ctx, name)
	return err
}

// A controller for a hub object: one Aggregator for all its objects, writing through the host's
// client and reading around its cache after a conflict.
func ExampleNew() {
	setup := func(mgr mcmanager.Manager) error {
		host := mgr.GetLocalManager()
		r := &widgetReconciler{
			mgr:    mgr,
			status: fleetstatus.New(host.GetClient(), fleetstatus.Options{APIReader: host.GetAPIReader()}),
		}
		return mcbuilder.ControllerManagedBy(mgr).
			For(&Widget{}, mcbuilder.WithEngageWithLocalCluster(true), mcbuilder.WithEngageWithProviderClusters(false)).
			Complete(r)
	}
	_ = setup // called with the manager (mcmanager.New) before mgr.Start
}
