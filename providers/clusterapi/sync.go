// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterapi

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"mcr.dev/core/kubeconfig"
	"mcr.dev/core/providers/kit"
)

// sync brings the engagement of one Cluster in line with the Cluster and its kubeconfig Secret.
func (p *Provider) sync(ctx context.Context, key types.NamespacedName) kit.Result {
	name := ClusterName(key.Namespace, key.Name)
	obj := p.opts.APIVersion.newObject()
	if res, ok := p.engine.GetHostObject(ctx, p.host.GetCache(), key, obj, name, func() kit.Result {
		p.engine.Disengage(name, nil, "the Cluster is gone")
		return kit.Result{}
	}); !ok {
		return res
	}
	switch {
	case obj.GetDeletionTimestamp() != nil:
		p.engine.Disengage(name, nil, "the Cluster is being deleted")
		return kit.Result{}
	case !p.selects(ctx, obj):
		p.engine.Disengage(name, obj, "the Cluster is not selected by the provider's options")
		return kit.Result{}
	case !p.opts.IsReady(ctx, obj):
		p.engine.Disengage(name, obj, "the Cluster is not ready")
		return kit.Result{}
	}

	member := kit.Member{Name: name, Regarding: obj}
	secretKey := types.NamespacedName{Namespace: key.Namespace, Name: KubeconfigSecretName(key.Name)}
	secret := &corev1.Secret{}
	if res, ok := p.engine.GetHostObject(ctx, p.host.GetCache(), secretKey, secret, name, func() kit.Result {
		// An engaged cluster keeps its working credentials: the control plane provider
		// recreates the Secret, and deleting the Cluster is what disengages it.
		return p.engine.Fail(key, member, kit.Permanent(ReasonKubeconfigSecretMissing,
			fmt.Errorf("kubeconfig Secret %s not found (it must be labeled %s=%s)", secretKey, ClusterNameLabel, key.Name)))
	}); !ok {
		return res
	}
	member.Related = secret
	member.From = "kubeconfig Secret " + secretKey.Name
	data := secret.Data[KubeconfigDataKey]
	if len(data) == 0 {
		return p.engine.Fail(key, member, kit.WithMetricReason(kit.Permanent(kit.ReasonInvalidKubeconfig,
			fmt.Errorf("kubeconfig Secret %s has no data under key %q", secretKey, KubeconfigDataKey)), reasonMissingData))
	}
	cfg, err := kubeconfig.Load(data, p.opts.Policy)
	if err != nil {
		return p.engine.Fail(key, member, kit.Permanent(kit.ReasonInvalidKubeconfig, fmt.Errorf("kubeconfig Secret %s: %w", secretKey, err)))
	}
	member.Config = cfg
	return p.engine.Engage(ctx, key, member)
}
