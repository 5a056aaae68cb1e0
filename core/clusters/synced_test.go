// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusters_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/clusters"
	"mcr.dev/core/multicluster"
)

// TestIndexedKindSyncedAtEngage records an index on ConfigMaps before a cluster is added, to a
// member holding many of them: when the Aware is told of the engagement, the informer the index
// started must have synced, and a List by the index must see every object (rule 3 of the
// provider contract). controller-runtime's IndexField starts the informer without waiting, so
// without a second wait the engagement came before the informer's initial list.
func TestIndexedKindSyncedAtEngage(t *testing.T) {
	ctx := t.Context()
	const objects = 300
	member, err := client.New(fleet.Member("a").Config(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "rule3-"}}
	if err := member.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = member.Delete(context.Background(), ns) })
	for i := range objects {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: fmt.Sprintf("cm-%d", i)}, Data: map[string]string{"color": "teal"}}
		if err := member.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}

	var cs clusters.Clusters[cluster.Cluster]
	byColor := func(obj client.Object) []string { return []string{obj.(*corev1.ConfigMap).Data["color"]} }
	if err := cs.IndexField(ctx, &corev1.ConfigMap{}, "color", byColor); err != nil {
		t.Fatal(err)
	}
	seen := &syncedAtEngage{namespace: ns.Name}
	if err := cs.Add(ctx, "a", memberCluster(t, "a"), seen); err != nil {
		t.Fatal(err)
	}
	defer cs.Remove("a")
	if !seen.engaged {
		t.Fatal("the cluster was not engaged")
	}
	if seen.err != nil {
		t.Fatalf("at Engage: %v", seen.err)
	}
	if !seen.synced {
		t.Error("the informer of the indexed kind had not synced when the cluster was engaged")
	}
	if seen.listed != objects {
		t.Errorf("a List by the index at Engage saw %d ConfigMaps, want %d", seen.listed, objects)
	}
}

// syncedAtEngage is an Aware that looks at the ConfigMap informer of the cluster it engages.
type syncedAtEngage struct {
	namespace       string
	engaged, synced bool
	listed          int
	err             error
}

func (s *syncedAtEngage) Engage(ctx context.Context, _ multicluster.ClusterName, cl cluster.Cluster) error {
	s.engaged = true
	informer, err := cl.GetCache().GetInformer(ctx, &corev1.ConfigMap{}, cache.BlockUntilSynced(false))
	if err != nil {
		s.err = err
		return nil
	}
	s.synced = informer.HasSynced()
	var list corev1.ConfigMapList
	if err := cl.GetCache().List(ctx, &list, client.InNamespace(s.namespace), client.MatchingFields{"color": "teal"}); err != nil {
		s.err = err
		return nil
	}
	s.listed = len(list.Items)
	return nil
}
