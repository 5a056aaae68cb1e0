// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package fleetstatus maintains the status of a hub object that summarizes the fleet: the
// object a multi-cluster-aware controller reads in one cluster (the hub) and acts on in every
// member, such as a policy or a config that is propagated.
//
// The controller works out, per cluster, how the object is doing there, as a Result
// (FromError turns the error of the work on one cluster into one). An Aggregator turns the
// results into the object's status:
//
//   - a list of ClusterConditions, one per cluster and condition type, whose LastTransitionTime
//     stays as it is while the status does not change (as meta.SetStatusCondition does for
//     metav1.Condition); clusters without a result have left the fleet and are dropped;
//   - the counts of ready and all clusters, for kubectl columns;
//   - a summary condition among the object's conditions (type FleetSynced by default): True
//     when every cluster is ready, with a message such as "Synced 198/200, failing: east-3
//     (Forbidden), west-1 (Timeout)", bounded in length.
//
// Messages are redacted of credentials (redact.Text) and truncated.
//
// Aggregator.Update writes the status only when it changed, with a merge patch of the status
// subresource that fails on a concurrent change and is then retried on a fresh read. Writes of
// one object are at least Options.MinInterval apart: a change within the interval is deferred and
// Update returns a reconcile.Result that requeues the object when the interval ends, so a burst
// of changes (clusters joining, a rollout reaching members one by one) becomes one write.
// Aggregator.Set does the same computation in memory only.
//
// The API type embeds FleetStatus in its status and implements Object, returning pointers to its
// fleet status and its conditions. Any typed object works, whatever its group and kind.
//
// See docs/advanced/status-aggregation.md and examples/multicluster-aware.
package fleetstatus
