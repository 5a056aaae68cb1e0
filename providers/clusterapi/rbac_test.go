// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterapi_test

import (
	"context"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/envtest"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/clusterapi"
)

// TestRBACManifest runs the provider as a ServiceAccount that has exactly the permissions of
// config/rbac.yaml on the management cluster: it must engage a Cluster and record its Events.
// The manifest is quoted in docs/providers/clusterapi.md only, and `make verify-docs` keeps that
// quote identical to the file.
func TestRBACManifest(t *testing.T) {
	ns := namespace(t)
	data, err := fleet.Member("mgmt").ServiceAccountKubeconfig(t.Context(), envtest.ServiceAccountOptions{
		Name:         "clusterapi-provider",
		ClusterRules: mustManifestRules(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	logs := &logBuffer{}
	p, err := clusterapi.New(cfg, clusterapi.Options{Namespaces: []string{ns}, Options: kit.Options{Logger: logs.Logger()}})
	if err != nil {
		t.Fatal(err)
	}
	s := runProvider(t, p, logs)
	c := readyCluster(t, ns, "rbac", "east")
	s.waitEngaged(t, c.clusterName())
	waitEvent(t, c, kit.ReasonClusterEngaged)
}

// mustManifestRules returns the rules of the ClusterRole in config/rbac.yaml.
func mustManifestRules(t *testing.T) []rbacv1.PolicyRule {
	t.Helper()
	rules, err := providertest.ManifestRules("config/rbac.yaml", "ClusterRole")
	if err != nil {
		t.Fatal(err)
	}
	return rules
}

// TestEachPermissionIsNeeded runs the provider, for every permission of config/rbac.yaml, with
// the manifest's rules less that one permission, and shows that something it does with all of
// them fails then: a Cluster present at start and one created later engaged, a ClusterEngaged
// Event recorded, and the Event series of a Cluster with two problems of one reason updated
// (patched); a Forbidden error logged for the provider's identity, or Start failing, counts as a
// failure too. Each runs on the shared management cluster and on one without streaming lists
// (WatchList off, as API servers before 1.34 or with the feature disabled), where informers
// list and then watch. A control run with every rule must do all of it on both.
func TestEachPermissionIsNeeded(t *testing.T) {
	// Namespaces and identities of its own: it runs alongside the other parallel tests.
	t.Parallel()
	rules := mustManifestRules(t)
	legacy := envtest.StartForTestWithOptions(t, envtest.Options{
		Members:        []string{"legacy"},
		APIServerFlags: map[string]string{"feature-gates": "WatchList=false"},
	}).Member("legacy")
	if err := installCRD(t.Context(), legacy.Config()); err != nil {
		t.Fatal(err)
	}
	hosts := map[string]*envtest.Member{"mgmt": fleet.Member("mgmt"), "no streaming lists": legacy}
	cases := append([]providertest.RuleRemoval{{Removed: "", Rules: rules}}, providertest.EachPermissionRemoved(rules)...)
	t.Run("removed", func(t *testing.T) {
		for _, c := range cases {
			name := c.Removed
			if name == "" {
				name = "nothing"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				var mu sync.Mutex
				failures := map[string][]string{}
				t.Run("hosts", func(t *testing.T) {
					for hostName, host := range hosts {
						t.Run(hostName, func(t *testing.T) {
							t.Parallel()
							f := rbacScenario(t, host, c.Rules)
							mu.Lock()
							defer mu.Unlock()
							if len(f) > 0 {
								failures[hostName] = f
							}
						})
					}
				})
				switch {
				case c.Removed == "" && len(failures) > 0:
					t.Errorf("the provider fails with every permission of the manifest: %v", failures)
				case c.Removed != "" && len(failures) == 0:
					t.Errorf("nothing fails without %s: the manifest need not grant it", c.Removed)
				default:
					t.Logf("fails: %v", failures)
				}
			})
		}
	})
}

// rbacWindow is how long the RBAC scenario waits for each thing the provider does.
const rbacWindow = 10 * time.Second

var rbacNamespaces atomic.Int32

// rbacScenario runs the provider on host as a ServiceAccount with exactly rules (cluster-wide),
// restricted to a namespace of its own, and returns what failed.
func rbacScenario(t *testing.T, host *envtest.Member, rules []rbacv1.PolicyRule) []string {
	cl, err := client.New(host.Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ns := fmt.Sprintf("rbac-%d", rbacNamespaces.Add(1))
	if err := cl.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	data, err := host.ServiceAccountKubeconfig(t.Context(), envtest.ServiceAccountOptions{Namespace: ns, Name: "provider", ClusterRules: rules})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	ready := func(name string, kubeconfig []byte) {
		t.Helper()
		if err := createReadyCluster(t.Context(), cl, ns, name, kubeconfig); err != nil {
			t.Fatal(err)
		}
	}
	event := func(cluster, reason string) *eventsv1.Event {
		var list eventsv1.EventList
		if err := cl.List(t.Context(), &list, client.InNamespace(ns)); err != nil {
			t.Error(err)
			return nil
		}
		for i, e := range list.Items {
			if e.Regarding.Name == cluster && e.Reason == reason {
				return &list.Items[i]
			}
		}
		return nil
	}

	logs := &logBuffer{}
	p, err := clusterapi.New(cfg, clusterapi.Options{Namespaces: []string{ns}, Options: kit.Options{
		CacheSyncTimeout: rbacWindow,
		RetryMinDelay:    100 * time.Millisecond,
		RetryMaxDelay:    2 * time.Second,
		Logger:           logs.Logger(),
	}})
	if err != nil {
		t.Fatal(err)
	}
	ready("before", fleet.Member("east").Kubeconfig())
	rec := providertest.NewRecorder()
	// Start may fail here (a cache that cannot sync), which is one of the failures to show.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Start(ctx, rec) }()
	var startErr error
	t.Cleanup(func() {
		cancel()
		if startErr != nil {
			return // Start has returned
		}
		select {
		case err := <-done:
			if err != nil {
				t.Logf("Start returned: %v", err) // a cache that cannot sync may end it so
			}
		case <-time.After(time.Minute):
			t.Error("Start did not return within a minute of its context ending")
		}
	})
	started := func() bool {
		if startErr == nil {
			select {
			case startErr = <-done:
			default:
			}
		}
		return startErr == nil
	}
	ready("after", fleet.Member("west").Kubeconfig())
	flaky := &atomic.Int32{}
	flaky.Store(http.StatusInternalServerError)
	ready("flaky", failingMember(t, flaky))

	var failures []string
	within := func(what string, cond func() bool) bool {
		deadline := time.Now().Add(rbacWindow)
		for !cond() {
			if time.Now().After(deadline) || !started() {
				failures = append(failures, what)
				return false
			}
			time.Sleep(100 * time.Millisecond)
		}
		return true
	}
	engaged := func(name string) func() bool {
		return func() bool { e, _ := rec.Latest(clusterapi.ClusterName(ns, name)); return e.Alive() }
	}
	within("Cluster present at start engaged", engaged("before"))
	within("Cluster created later engaged", engaged("after"))
	within("ClusterEngaged Event recorded", func() bool { return event("after", kit.ReasonClusterEngaged) != nil })
	// A second Warning of the same reason on the same Cluster is a series: the recorder patches
	// the first Event.
	if within("first ClusterUnreachable Event recorded", func() bool { return event("flaky", kit.ReasonClusterUnreachable) != nil }) {
		flaky.Store(http.StatusBadGateway)
		within("Event series updated", func() bool {
			e := event("flaky", kit.ReasonClusterUnreachable)
			return e != nil && e.Series != nil && e.Series.Count >= 2
		})
	}
	if !started() {
		failures = append(failures, fmt.Sprintf("Start failed: %v", startErr))
	}
	user := fmt.Sprintf("system:serviceaccount:%s:provider", ns)
	for _, lines := range [][]string{logs.All(user, "forbidden"), processLogs.All(user, "forbidden")} {
		if len(lines) > 0 {
			failures = append(failures, "Forbidden: "+lines[0])
			break
		}
	}
	return failures
}

// failingMember returns a kubeconfig for an HTTPS server that answers every request with the
// status code in status: a member that is unreachable in a way the test can change.
func failingMember(t *testing.T, status *atomic.Int32) []byte {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(int(status.Load()))
	}))
	t.Cleanup(srv.Close)
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["flaky"] = &clientcmdapi.Cluster{
		Server:                   srv.URL,
		CertificateAuthorityData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}),
	}
	cfg.AuthInfos["flaky"] = &clientcmdapi.AuthInfo{Token: "flaky-member-token"}
	cfg.Contexts["flaky"] = &clientcmdapi.Context{Cluster: "flaky", AuthInfo: "flaky"}
	cfg.CurrentContext = "flaky"
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
