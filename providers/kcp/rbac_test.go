// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kcp_test

import (
	"fmt"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kcp-dev/logicalcluster/v3"

	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/kcp"
	"mcr.dev/providers/kcp/internal/frontproxy"
)

// rbacExport is the APIExport config/rbac.yaml grants apiexports/content of.
const rbacExport = "widgets"

// TestEachPermissionIsNeeded runs the provider as a ServiceAccount of the APIExport's workspace
// with exactly the rules of config/rbac.yaml, and with each permission of it taken away. The
// shard authorizes the ServiceAccount as kcp does (apiexports/content of the APIExport, see
// frontproxy.Authorization). With the whole manifest the provider starts, engages a logical
// cluster and records its Events on the slice, the second as a series of the first; without
// any one permission something of that fails or a Forbidden error is logged for the
// ServiceAccount.
func TestEachPermissionIsNeeded(t *testing.T) {
	rules := providertest.MustManifestRules(t, "config/rbac.yaml", "ClusterRole")
	providertest.RunPermissionTests(t, providertest.PermissionTest{
		Rules: rules,
		Scenario: func(t *testing.T, c providertest.PermissionCase, _ string) []string {
			window := 15 * time.Second
			if c.Whole() {
				window = waitTimeout
			}
			return runWithRules(t, fmt.Sprintf("kcp-rbac-%d", c.Index), c.Rules, window)
		},
	})
}

// runWithRules runs the provider as a ServiceAccount with rules, waiting at most window for each
// step, and returns what did not work: Start failing, the logical cluster not engaged, the
// slice's Events missing or not made a series, Forbidden errors logged for the ServiceAccount.
func runWithRules(t *testing.T, namespace string, rules []rbacv1.PolicyRule, window time.Duration) []string {
	t.Helper()
	ctx := t.Context()
	sa := providertest.ServiceAccountConfig(t, fleet.Member("host"), envtest.ServiceAccountOptions{
		Namespace:    namespace,
		Name:         "provider",
		ClusterRules: rules,
	})

	shard, err := frontproxy.Start(frontproxy.Options{
		Authorization: &frontproxy.Authorization{Workspace: fleet.Member("host").Config(), Export: rbacExport},
		Backends:      []frontproxy.Backend{{Name: "north", Config: fleet.Member("north").Config()}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(shard.Close)
	lc := logicalcluster.Name(uniqueName(t, "lc"))
	if err := shard.AddCluster(lc, "north"); err != nil {
		t.Fatal(err)
	}
	newBinding(t, "north", lc, lc.String()+"-binding", "", true)
	// Two endpoints where nothing answers: two EndpointUnavailable Events on the slice, the
	// second a series of the first (an update of the Event by patch).
	slice := newSlice(t, shard.URL(),
		"https://127.0.0.1:1/services/apiexport/root/one", "https://127.0.0.1:1/services/apiexport/root/two")

	cfg := fleet.Member("host").Config()
	cfg.CertData, cfg.KeyData = nil, nil
	cfg.BearerToken = sa.BearerToken
	cfg.CAData = append(cfg.CAData, shard.CAData()...)
	logs := &providertest.LogBuffer{}
	p, err := kcp.New(cfg, slice, kcp.Options{Options: providertest.TestKitOptions(kit.Options{CacheSyncTimeout: 10 * time.Second}, logs)})
	if err != nil {
		t.Fatal(err)
	}
	trial := providertest.StartTrial(t, p, window, waitTimeout)
	series := func() int32 {
		return providertest.EventCount(ctx, host, metav1.NamespaceDefault, providertest.EventTarget{Name: slice}, kcp.ReasonEndpointUnavailable)
	}
	trial.Within("the logical cluster was not engaged", func() bool {
		e, _ := trial.Recorder.Latest(multicluster.ClusterName(lc))
		return e.Alive()
	})
	if trial.Within("no EndpointUnavailable Event on the slice", func() bool { return series() >= 1 }) {
		trial.Within("the second EndpointUnavailable Event was not recorded as a series", func() bool { return series() >= 2 })
	}
	trial.FailForbidden("system:serviceaccount:"+namespace+":provider", logs, &providertest.ProcessLogs)
	return trial.Failures()
}
