// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package ownership

import (
	"context"

	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/multicluster"
)

// ownerEvents records Events on owners in their cluster. The zero value records nothing.
type ownerEvents struct {
	recorder events.EventRecorder
}

// recorder returns the Event recorder of the owner's cluster; none if the cluster is gone.
func (t *Tracker) recorder(ctx context.Context, ownerCluster multicluster.ClusterName) ownerEvents {
	cl, err := t.mgr.GetCluster(ctx, ownerCluster)
	if err != nil {
		return ownerEvents{}
	}
	return ownerEvents{recorder: cl.GetEventRecorder(t.opts.EventSource)}
}

func (e ownerEvents) event(owner client.Object, eventType, reason, note string) {
	if e.recorder != nil {
		e.recorder.Eventf(owner, nil, eventType, reason, "Finalize", "%s", note)
	}
}
