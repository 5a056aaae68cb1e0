// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kubeconfig

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/kubeconfig"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
)

// secretState is what the provider remembers about one selected Secret beyond what the engine
// knows of its member: the name, which belongs to the Secret, not to the member.
type secretState struct {
	// name is the cluster name the Secret owns, or waits for while another Secret owns it
	// (claimed is false then).
	name    multicluster.ClusterName
	claimed bool
	// problem is the Secret's problem with its name (a conflict, an empty name).
	problem kit.Problem
}

// sync brings the cluster of one Secret in line with the Secret: read it, claim its cluster name
// (giving up one it no longer maps to), then engage it with its kubeconfig.
func (p *Provider) sync(ctx context.Context, key types.NamespacedName) kit.Result {
	log := p.engine.Logger().WithValues("secret", key.String())
	secret, err := p.readSecret(ctx, key)
	if err != nil {
		log.Error(err, "Reading the Secret from the host cache")
		return kit.Result{Retry: true}
	}
	if secret == nil {
		p.forget(key, log)
		return kit.Result{}
	}

	name := p.opts.ClusterName(secret)
	if name == "" { // the manager's name for its local cluster
		p.release(key, secret, "Options.ClusterName maps the Secret to no name")
		p.reportName(key, secret, log, kit.ReasonClusterSetupFailed,
			fmt.Errorf("kubeconfig Secret %s: Options.ClusterName returned an empty cluster name", key))
		return kit.Result{}
	}
	log = log.WithValues("cluster", name)
	owner, claimed := p.claim(key, secret, name)
	if !claimed {
		p.reportName(key, secret, log, ReasonClusterNameConflict,
			fmt.Errorf("kubeconfig Secret %s: cluster name %q is already used by Secret %s; it is served once that Secret goes away", key, name, owner))
		return kit.Result{}
	}
	p.names.Resolve(&p.state(key).problem, log)

	member := kit.Member{Name: name, Regarding: secret, From: "kubeconfig Secret " + key.String()}
	data := secret.Data[p.opts.SecretKey]
	if len(data) == 0 {
		return p.engine.Fail(key, member, kit.WithMetricReason(kit.Permanent(kit.ReasonInvalidKubeconfig,
			fmt.Errorf("kubeconfig Secret %s has no kubeconfig under data key %q", key, p.opts.SecretKey)), ReasonMissingKubeconfig))
	}
	cfg, err := kubeconfig.Load(data, p.opts.Policy)
	if err != nil {
		return p.engine.Fail(key, member, kit.Permanent(kit.ReasonInvalidKubeconfig, fmt.Errorf("kubeconfig Secret %s: kubeconfig rejected: %w", key, err)))
	}
	member.Config = cfg
	return p.engine.Engage(ctx, key, member)
}

// readSecret returns the Secret from the host cache, or nil when it is gone, no longer selected
// or being deleted.
func (p *Provider) readSecret(ctx context.Context, key types.NamespacedName) (*corev1.Secret, error) {
	s := &corev1.Secret{}
	if err := p.host.GetCache().Get(ctx, key, s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	if !p.selects(s) || s.DeletionTimestamp != nil {
		return nil, nil
	}
	return s, nil
}

// state returns what the provider knows about key, creating it.
func (p *Provider) state(key types.NamespacedName) *secretState {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.secrets[key]
	if st == nil {
		st = &secretState{}
		p.secrets[key] = st
	}
	return st
}

// secretKeys returns the keys of every selected Secret the provider knows, for the resync.
func (p *Provider) secretKeys() []types.NamespacedName {
	p.mu.Lock()
	defer p.mu.Unlock()
	keys := make([]types.NamespacedName, 0, len(p.secrets))
	for key := range p.secrets {
		keys = append(keys, key)
	}
	return keys
}

// claim makes key the owner of name and reports true, or reports false and the owner when
// another Secret owns name; key then waits for it. A Secret that owned another name gives it
// up first: it was renamed.
func (p *Provider) claim(key types.NamespacedName, secret *corev1.Secret, name multicluster.ClusterName) (types.NamespacedName, bool) {
	st := p.state(key)
	p.mu.Lock()
	renamed := st.claimed && st.name != name
	p.mu.Unlock()
	if renamed {
		p.release(key, secret, fmt.Sprintf("the Secret now maps to cluster name %q", name))
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	st.name = name
	if owner, taken := p.owners[name]; taken && owner != key {
		st.claimed = false
		return owner, false
	}
	p.owners[name], st.claimed = key, true
	return key, true
}

// release disengages the cluster of key, gives up its name and wakes the Secrets waiting for
// it. The name stays owned until the cluster has stopped, so that no waiting Secret engages it
// meanwhile. regarding, when not nil, gets a ClusterDisengaged Event.
func (p *Provider) release(key types.NamespacedName, regarding client.Object, why string) {
	p.mu.Lock()
	st := p.secrets[key]
	if st == nil || !st.claimed {
		if st != nil {
			st.name = "" // no longer waiting for a name
		}
		p.mu.Unlock()
		return
	}
	name := st.name
	p.mu.Unlock()

	p.engine.Disengage(name, regarding, why)

	p.mu.Lock()
	delete(p.owners, name)
	st.name, st.claimed = "", false
	var waiting []types.NamespacedName
	for k, other := range p.secrets {
		if other.name == name && !other.claimed {
			waiting = append(waiting, k)
		}
	}
	p.mu.Unlock()
	for _, k := range waiting {
		p.engine.Add(k)
	}
}

// forget handles a Secret that was deleted or is no longer selected.
func (p *Provider) forget(key types.NamespacedName, log logr.Logger) {
	p.release(key, nil, "the Secret is gone or no longer selected")
	p.mu.Lock()
	st := p.secrets[key]
	delete(p.secrets, key)
	p.mu.Unlock()
	if st != nil {
		p.names.Resolve(&st.problem, log)
	}
}

// reportName reports a problem of the Secret's cluster name: counted, logged and recorded as an
// Event on the Secret the same way the engine reports problems of members.
func (p *Provider) reportName(key types.NamespacedName, secret *corev1.Secret, log logr.Logger, reason string, err error) {
	p.names.Report(&p.state(key).problem, log, secret, nil, reason, reason, err)
}
