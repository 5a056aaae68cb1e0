// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/multicluster"
)

// syncedObjects is how many indexed objects the member of CacheSyncedAtEngage holds before the
// provider starts: enough that the informer's initial list is not instantaneous.
const syncedObjects = 25

// testCacheSyncedAtEngage observes rule 3 (a member's cache is synced before it is engaged) at
// the one moment it is about: while Engage runs. An index registered before a member exists
// starts the informer of its kind in the member's cache; when the provider engages the member,
// that informer must have synced, and a List by the index must see every object the member
// already had. controller-runtime's IndexField starts the informer without waiting for it, so a
// provider that engages right after applying its indexes fails here and nowhere else: every
// later read waits for the sync on its own.
func testCacheSyncedAtEngage(s *spec) {
	pre := s.create("sync-pre")
	value := "synced-" + randomToken()
	for i := range syncedObjects {
		s.writeObject(pre, fmt.Sprintf("sync-%s-%d", pre.ID, i), map[string]string{"v": value})
	}
	in := s.newInstance()
	before := s.indexFieldName("synced-before-start")
	if err := in.indexField(s.ctx, &corev1.ConfigMap{}, before, dataIndexer("v")); err != nil {
		s.failf("IndexField(%q) before Start: %v", before, err)
	}
	in.probe.setCheckAtEngage(syncedAtEngage(pre.Name, value, before))
	in.start()
	e := s.waitEngaged(in, pre)
	if e.atEngage != "" {
		s.failf("when %q was engaged (a member that existed at Start): %s", pre.Name, e.atEngage)
	}

	// An index registered while the provider runs, before the next member exists.
	between := s.indexFieldName("synced-between")
	if err := in.indexField(s.ctx, &corev1.ConfigMap{}, between, dataIndexer("v")); err != nil {
		s.failf("IndexField(%q) while running: %v", between, err)
	}
	in.probe.setCheckAtEngage(syncedAtEngage(pre.Name, value, before, between))
	added := s.create("sync-added")
	if e := s.waitEngaged(in, added); e.atEngage != "" {
		s.failf("when %q was engaged (a member added while the provider ran): %s", added.Name, e.atEngage)
	}
}

// syncedAtEngage returns the probe's check of CacheSyncedAtEngage: the ConfigMap informer of the
// cluster has synced, and a List by each of fields works and, on pre (the member that existed
// before Start, the only one whose objects exist when it is engaged), sees all of value's
// objects.
func syncedAtEngage(pre multicluster.ClusterName, value string, fields ...string) func(multicluster.ClusterName, cluster.Cluster) string {
	return func(name multicluster.ClusterName, cl cluster.Cluster) string {
		// The engage context may be one the provider ends at once (other tests catch that);
		// nothing here blocks on a read that has not synced.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		informer, err := cl.GetCache().GetInformer(ctx, &corev1.ConfigMap{}, cache.BlockUntilSynced(false))
		if err != nil {
			return fmt.Sprintf("getting the cache's ConfigMap informer: %v", err)
		}
		if !informer.HasSynced() {
			return fmt.Sprintf("the ConfigMap informer, which the index %q registered before the member existed started, "+
				"had not synced: the cluster was engaged before its cache had synced (rule 3)", fields[len(fields)-1])
		}
		for _, field := range fields {
			list := &corev1.ConfigMapList{}
			if err := cl.GetCache().List(ctx, list, client.MatchingFields{field: value}); err != nil {
				return fmt.Sprintf("a List by the index %q, registered before the member existed, failed: %v", field, err)
			}
			if n := len(list.Items); name == pre && n != syncedObjects {
				return fmt.Sprintf("a List by the index %q saw %d of the member's %d objects: the cache had not synced", field, n, syncedObjects)
			}
		}
		return ""
	}
}
