// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package ownership

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/multicluster"
)

// ownerEvents records Events on owners in their cluster, whose recorder it looks up only when
// there is something to record.
type ownerEvents struct {
	t       *Tracker
	cluster multicluster.ClusterName
}

func (t *Tracker) events(ownerCluster multicluster.ClusterName) ownerEvents {
	return ownerEvents{t: t, cluster: ownerCluster}
}

// event records an Event on owner; none if the owner's cluster is gone.
func (e ownerEvents) event(ctx context.Context, owner client.Object, eventType, reason, note string) {
	cl, err := e.t.mgr.GetCluster(ctx, e.cluster)
	if err != nil {
		return
	}
	cl.GetEventRecorder(e.t.opts.EventSource).Eventf(owner, nil, eventType, reason, "Finalize", "%s", note)
}
