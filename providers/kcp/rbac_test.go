// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kcp_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"sigs.k8s.io/controller-runtime/pkg/client"

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
	rules, err := providertest.ManifestRules("config/rbac.yaml", "ClusterRole")
	if err != nil {
		t.Fatal(err)
	}
	cases := append([]providertest.RuleRemoval{{Removed: "none", Rules: rules}}, providertest.EachPermissionRemoved(rules)...)
	for i, c := range cases {
		t.Run("without "+c.Removed, func(t *testing.T) {
			t.Parallel()
			whole := i == 0
			window := 15 * time.Second
			if whole {
				window = waitTimeout
			}
			failures := runWithRules(t, fmt.Sprintf("kcp-rbac-%d", i), c.Rules, window, whole)
			switch {
			case whole && len(failures) > 0:
				t.Errorf("with the whole manifest: %s", strings.Join(failures, "; "))
			case !whole && len(failures) == 0:
				t.Errorf("nothing failed without %s: the permission is not needed", c.Removed)
			case !whole:
				t.Logf("without %s: %s", c.Removed, strings.Join(failures, "; "))
			}
		})
	}
}

// runWithRules runs the provider as a ServiceAccount with rules for window (until all went well,
// when whole) and returns what did not work: Start failing, the logical cluster not engaged, the
// slice's Events missing or not made a series, Forbidden errors logged for the ServiceAccount.
func runWithRules(t *testing.T, namespace string, rules []rbacv1.PolicyRule, window time.Duration, whole bool) []string {
	t.Helper()
	ctx := t.Context()
	kubeconfig, err := fleet.Member("host").ServiceAccountKubeconfig(ctx, envtest.ServiceAccountOptions{
		Namespace:    namespace,
		Name:         "provider",
		ClusterRules: rules,
	})
	if err != nil {
		t.Fatal(err)
	}
	sa, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	user := "system:serviceaccount:" + namespace + ":provider"

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
	p, err := kcp.New(cfg, slice, kcp.Options{Options: kit.Options{
		CacheSyncTimeout: 10 * time.Second,
		RetryMinDelay:    100 * time.Millisecond,
		RetryMaxDelay:    2 * time.Second,
		Logger:           logs.Logger(),
	}})
	if err != nil {
		t.Fatal(err)
	}
	rec := providertest.NewRecorder()
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Start(runCtx, rec) }()
	defer func() {
		cancel()
		select {
		case err := <-done:
			_ = err // reported by the loop below when it ended the run
		case <-time.After(waitTimeout):
			t.Errorf("provider Start did not return within %s of its context ending", waitTimeout)
		}
	}()

	var startErr error
	engaged, series := false, false
	deadline := time.Now().Add(window)
	for time.Now().Before(deadline) && (!whole || !engaged || !series) && startErr == nil {
		select {
		case startErr = <-done:
			done <- startErr
		case <-time.After(500 * time.Millisecond):
		}
		if e, _ := rec.Latest(multicluster.ClusterName(lc)); e.Alive() {
			engaged = true
		}
		series = sliceEventSeries(ctx, slice, kcp.ReasonEndpointUnavailable) >= 2
	}

	var failures []string
	if startErr != nil {
		failures = append(failures, fmt.Sprintf("Start failed: %v", startErr))
	}
	if !engaged {
		failures = append(failures, "the logical cluster was not engaged")
	}
	switch n := sliceEventSeries(ctx, slice, kcp.ReasonEndpointUnavailable); n {
	case 0:
		failures = append(failures, "no EndpointUnavailable Event on the slice")
	case 1:
		failures = append(failures, "the second EndpointUnavailable Event was not recorded as a series")
	}
	for _, l := range append(logs.Lines(), processLogs.Lines()...) {
		if strings.Contains(l, "forbidden") && strings.Contains(l, user) {
			failures = append(failures, "logged: "+l)
			break
		}
	}
	return failures
}

// sliceEventSeries returns how often an Event of reason was recorded on the slice: 0 without
// one, its series count if it has a series, 1 otherwise.
func sliceEventSeries(ctx context.Context, slice, reason string) int32 {
	var list eventsv1.EventList
	if err := host.List(ctx, &list, client.InNamespace(metav1.NamespaceDefault)); err != nil {
		return 0
	}
	var n int32
	for _, ev := range list.Items {
		if ev.Regarding.Name != slice || ev.Reason != reason {
			continue
		}
		c := int32(1)
		if ev.Series != nil {
			c = ev.Series.Count
		}
		n = max(n, c)
	}
	return n
}
