// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package faults

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"mcr.dev/core/envtest"
	"mcr.dev/core/internal/testcheck"
	"mcr.dev/core/kubeconfig"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
)

// kubeconfigProvider serves members from kubeconfigs the test sets, through the kit's engine
// exactly as the kubeconfig, file and Cluster API providers do: kubeconfig.Load with the
// default policy, kit.Engine.Fail for a kubeconfig it refuses (the working instance stays
// engaged), Engage for a valid one, Disengage when the kubeconfig goes. Only the source of
// truth is the test's map instead of Secrets or files, so that a test can change it at the
// pace of a soak; each provider's own source is tested in its module.
type kubeconfigProvider struct {
	kit.Members[string]
	engine  *kit.Engine[string]
	desired kit.Desired[string, []byte]
	events  *reasons
	policy  kubeconfig.Policy
}

func newKubeconfigProvider(t testing.TB, opts kit.Options) *kubeconfigProvider {
	t.Helper()
	p := &kubeconfigProvider{events: &reasons{}, policy: opts.Policy}
	opts.EventRecorder = p.events
	if opts.CacheSyncTimeout == 0 {
		opts.CacheSyncTimeout = cacheSyncTimeout
	}
	opts.RetryMinDelay, opts.RetryMaxDelay = 100*time.Millisecond, 2*time.Second
	e, err := p.Init(kit.EngineOptions[string]{Name: "faults-kubeconfig-provider", Options: opts, Sync: p.sync})
	if err != nil {
		t.Fatal(err)
	}
	p.engine = e
	return p
}

func (p *kubeconfigProvider) sync(ctx context.Context, name string) kit.Result {
	regarding := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: name}}
	data, ok := p.desired.Get(name)
	if !ok {
		p.engine.Disengage(multicluster.ClusterName(name), regarding, "its kubeconfig is gone")
		return kit.Result{}
	}
	m := kit.Member{Name: multicluster.ClusterName(name), Regarding: regarding, From: "test kubeconfig " + name}
	cfg, err := kubeconfig.Load(data, p.policy)
	if err != nil {
		return p.engine.Fail(name, m, kit.Permanent(kit.ReasonInvalidKubeconfig, err))
	}
	m.Config = cfg
	return p.engine.Engage(ctx, name, m)
}

// set makes data the kubeconfig of name; nil removes the member.
func (p *kubeconfigProvider) set(name string, data []byte) {
	if data == nil {
		p.desired.Delete(name)
	} else {
		p.desired.Set(name, data)
	}
	p.engine.Add(name)
}

// reasons is an EventRecorder that counts the reasons of the Events recorded per member.
type reasons struct {
	mu     sync.Mutex
	counts map[string]int // by member/reason
}

func (r *reasons) Eventf(regarding, _ runtime.Object, _, reason, _, _ string, _ ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.counts == nil {
		r.counts = map[string]int{}
	}
	r.counts[regarding.(metav1.Object).GetName()+"/"+reason]++
}

func (r *reasons) count(member, reason string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.counts[member+"/"+reason]
}

// waitReason waits until member has n Events with reason.
func (r *reasons) waitReason(t testing.TB, member, reason string, n int) {
	t.Helper()
	if !testcheck.Within(time.Minute, func() bool { return r.count(member, reason) >= n }) {
		t.Fatalf("no %d %s Event(s) on %s within a minute (%d)", n, reason, member, r.count(member, reason))
	}
}

// memberKubeconfig mints a kubeconfig for a new ServiceAccount of member, allowed to read
// namespaces and read and patch ConfigMaps, and returns it with the user its token
// authenticates as.
func memberKubeconfig(ctx context.Context, member, account string) ([]byte, string, error) {
	data, err := fleet.Member(member).ServiceAccountKubeconfig(ctx, envtest.ServiceAccountOptions{
		Name: account,
		ClusterRules: append(envtest.DefaultServiceAccountClusterRules(),
			rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"patch"}}),
	})
	if err != nil {
		return nil, "", fmt.Errorf("minting a kubeconfig for %s on %s: %w", account, member, err)
	}
	cfg, err := kubeconfig.Load(data, kubeconfig.Policy{})
	if err != nil {
		return nil, "", err
	}
	user, err := providertest.UserOf(ctx, cfg)
	if err != nil {
		return nil, "", err
	}
	return data, user, nil
}
