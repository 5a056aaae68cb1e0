// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kind

import (
	"context"
	"fmt"

	"mcr.dev/core/kubeconfig"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
)

// reasonKubeconfigUnavailable is the reason of the problem of a listed kind cluster whose
// kubeconfig cannot be read (its node container is stopped or wedged, the engine is busy, the
// cluster is being deleted). It is tried again at the next poll; an engaged cluster stays
// engaged meanwhile.
const reasonKubeconfigUnavailable = "KubeconfigUnavailable"

// sync engages one listed kind cluster with the kubeconfig it has now, or disengages a cluster
// that the last list did not show.
//
// kind writes a new CA and new credentials for every cluster it creates, so a cluster deleted
// and created again under the same name, even between two polls, has other credentials and is
// engaged again; a cluster listed again with the same kubeconfig costs a comparison. The
// engine's access check keeps out clusters that `kind create cluster` has not finished (the node
// container and its admin.conf exist before the API server serves), and a kubeconfig read that
// straddles a delete and create (one cluster's credentials with the other's address).
func (p *Provider) sync(ctx context.Context, name multicluster.ClusterName) kit.Result {
	if _, listed := p.listed.Get(name); !listed {
		p.engine.Disengage(name, nil, "the kind cluster is gone")
		return kit.Result{}
	}
	member := kit.Member{Name: name}
	data, err := p.kind.kubeconfig(ctx, string(name), p.opts.Internal)
	if err != nil {
		if ctx.Err() != nil {
			return kit.Result{}
		}
		// Not retried with backoff: every poll queues the cluster again.
		return p.engine.Fail(name, member, kit.Permanent(reasonKubeconfigUnavailable, err))
	}
	// kind writes inline credentials only; the policy still matters, since the bytes come out of
	// a container, and whatever can write the node's admin.conf must not make the controller
	// run a program or read a local file.
	if member.Config, err = kubeconfig.Load(data, p.opts.Policy); err != nil {
		return p.engine.Fail(name, member, kit.Permanent(kit.ReasonInvalidKubeconfig, fmt.Errorf("kubeconfig of kind cluster %q: %w", name, err)))
	}
	return p.engine.Engage(ctx, name, member)
}
