// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package ownership_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mcbuilder "mcr.dev/core/builder"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/ownership"
	mcreconcile "mcr.dev/core/reconcile"
)

// A projection is marked with its owner, and the marking is read back.
func ExampleSetOwner() {
	owner := ownership.Owner{Cluster: "hub", Kind: "ConfigMap", Namespace: "demo", Name: "settings", UID: "3f0c9d1e-5b7a-4c2e-9d8f-1a2b3c4d5e6f"}
	projection := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "settings"}}
	if err := ownership.SetOwner(projection, owner); err != nil {
		panic(err)
	}
	fmt.Println(projection.Labels[ownership.LabelOwnerUID], projection.Labels[ownership.LabelOwnerCluster])

	got, err := ownership.GetOwner(projection)
	fmt.Println(got, err)
	// Output:
	// 3f0c9d1e-5b7a-4c2e-9d8f-1a2b3c4d5e6f hub
	// ConfigMap demo/settings in cluster "hub" (uid 3f0c9d1e-5b7a-4c2e-9d8f-1a2b3c4d5e6f) <nil>
}

// Cluster names that are no label value (kcp paths, long names) are hashed in the label; the
// annotation keeps the full name.
func ExampleClusterLabelValue() {
	fmt.Println(ownership.ClusterLabelValue("east"))
	fmt.Println(ownership.ClusterLabelValue("root:org:team-a"))
	// Output:
	// east
	// h-adccfe7fb0565b5082cdf86f6fb0157888f892c6
}

// A hub controller: owners in the local cluster, projections in every member. Projections
// changed or deleted in a member reconcile their owner; deleting an owner deletes its
// projections everywhere; a Sweeper deletes orphans.
func ExampleTracker() {
	var mgr mcmanager.Manager // from mcmanager.New(cfg, provider, opts)
	tracker, err := ownership.NewTracker(mgr, ownership.Options{Projections: []client.ObjectList{&corev1.ConfigMapList{}}})
	if err != nil {
		return
	}
	settings := schema.GroupKind{Group: "example.com", Kind: "Settings"}
	_ = mgr.Add(tracker.Sweeper(settings)) // opt-in orphan sweep

	_ = mcbuilder.ControllerManagedBy(mgr).
		For(&corev1.ConfigMap{}, mcbuilder.WithEngageWithLocalCluster(true), mcbuilder.WithEngageWithProviderClusters(false)).
		Watches(&corev1.ConfigMap{}, ownership.EnqueueOwner(settings), mcbuilder.WithEngageWithLocalCluster(false)).
		Complete(mcreconcile.Func(func(ctx context.Context, req mcreconcile.Request) (mcreconcile.Result, error) {
			owner := &corev1.ConfigMap{} // read from req.ClusterName
			if !owner.DeletionTimestamp.IsZero() {
				return tracker.Finalize(ctx, req.ClusterName, owner)
			}
			members := mgr.EngagedClusters()
			if err := tracker.Track(ctx, req.ClusterName, owner, members...); err != nil {
				return mcreconcile.Result{}, err
			}
			ref, err := tracker.Owner(ctx, req.ClusterName, owner)
			if err != nil {
				return mcreconcile.Result{}, err
			}
			for range members {
				projection := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: owner.Namespace, Name: owner.Name}}
				if err := ownership.SetOwner(projection, ref); err != nil {
					return mcreconcile.Result{}, err // another owner's object of that name
				}
				// create or update projection in the member
			}
			return mcreconcile.Result{}, nil
		}))
}
