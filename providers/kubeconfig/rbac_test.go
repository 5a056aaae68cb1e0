// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kubeconfig_test

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
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/kubeconfig"
)

// TestDocumentedRBACIsEnough runs the provider with a host identity that has exactly the rules of
// config/rbac.yaml (the manifest README.md points to) and nothing else.
func TestDocumentedRBACIsEnough(t *testing.T) {
	rules, err := providertest.ManifestRules("config/rbac.yaml", "Role")
	if err != nil {
		t.Fatal(err)
	}

	ns := newNamespace(t)
	hostKubeconfig, err := fleet.Member("hub").ServiceAccountKubeconfig(t.Context(), envtest.ServiceAccountOptions{
		Namespace:    ns,
		Name:         "provider",
		Rules:        rules,
		ClusterRules: []rbacv1.PolicyRule{},
	})
	if err != nil {
		t.Fatal(err)
	}
	hostConfig := restConfig(t, hostKubeconfig)

	p, err := newProviderFor(hostConfig, testOptions(ns))
	if err != nil {
		t.Fatal(err)
	}
	aware := newRecordingAware()
	startProvider(t, p, aware)
	putSecret(t, ns, "m1", fleet.Member("m1").Kubeconfig())
	if err := canListNamespaces(t.Context(), aware.waitEngaged(t, "m1", 1)); err != nil {
		t.Fatal(err)
	}
	// Events are written with the same identity.
	waitEvent(t, ns, "m1", "ClusterEngaged")
}

// TestEachPermissionIsNeeded runs the provider, for every permission of config/rbac.yaml, with
// the manifest's rules less that one permission, and shows that something it does with all of
// them fails then: a Secret present at start and one created later engaged, a ClusterEngaged
// Event recorded, and the Event series of a Secret with two problems of one reason updated
// (patched); a Forbidden error logged for the provider's identity counts as a failure too. Each
// runs on the shared hub and on a host without streaming lists (WatchList off, as API servers
// before 1.34 or with the feature disabled), where informers list and then watch. A control run
// with every rule must do all of it on both without a Forbidden error.
func TestEachPermissionIsNeeded(t *testing.T) {
	// Namespaces and identities of its own: it runs alongside the other parallel tests.
	t.Parallel()
	rules, err := providertest.ManifestRules("config/rbac.yaml", "Role")
	if err != nil {
		t.Fatal(err)
	}
	legacy := envtest.StartForTestWithOptions(t, envtest.Options{
		Members:        []string{"legacy"},
		APIServerFlags: map[string]string{"feature-gates": "WatchList=false"},
	}).Member("legacy")
	hosts := map[string]*envtest.Member{"hub": fleet.Member("hub"), "no streaming lists": legacy}
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

// rbacScenario runs the provider on host as a ServiceAccount with exactly rules in a namespace
// of its own and returns what failed.
func rbacScenario(t *testing.T, host *envtest.Member, rules []rbacv1.PolicyRule) []string {
	client := kubernetes.NewForConfigOrDie(host.Config())
	ns := fmt.Sprintf("rbac-%d", namespaces.Add(1))
	if _, err := client.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hostKubeconfig, err := host.ServiceAccountKubeconfig(t.Context(), envtest.ServiceAccountOptions{
		Namespace: ns, Name: "provider", Rules: rules, ClusterRules: []rbacv1.PolicyRule{},
	})
	if err != nil {
		t.Fatal(err)
	}
	put := func(name string, data []byte) {
		t.Helper()
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{kubeconfig.DefaultSecretLabel: "true"}},
			Data:       map[string][]byte{kubeconfig.DefaultSecretKey: data},
		}
		if _, err := client.CoreV1().Secrets(ns).Create(t.Context(), s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	event := func(secret, reason string) *eventsv1.Event {
		list, err := client.EventsV1().Events(ns).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Error(err)
			return nil
		}
		for i, e := range list.Items {
			if e.Regarding.Name == secret && e.Reason == reason {
				return &list.Items[i]
			}
		}
		return nil
	}

	var plogs providertest.LogBuffer
	opts := testOptions(ns)
	opts.CacheSyncTimeout = rbacWindow
	opts.Logger = plogs.Logger()
	p, err := newProviderFor(restConfig(t, hostKubeconfig), opts)
	if err != nil {
		t.Fatal(err)
	}
	put("before", fleet.Member("m1").Kubeconfig())
	aware := newRecordingAware()
	// Start may fail here (a cache that cannot sync), which is one of the failures to show.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Start(ctx, aware) }()
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
	put("after", fleet.Member("m2").Kubeconfig())
	flaky := &atomic.Int32{}
	flaky.Store(http.StatusInternalServerError)
	put("flaky", failingMember(t, flaky))

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
	engaged := func(name multicluster.ClusterName) func() bool {
		return func() bool { _, alive := aware.current(name); return alive }
	}
	within("Secret present at start engaged", engaged("before"))
	within("Secret created later engaged", engaged("after"))
	within("ClusterEngaged Event recorded", func() bool { return event("after", kit.ReasonClusterEngaged) != nil })
	// A second Warning of the same reason on the same Secret is a series: the recorder patches
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
	for _, lines := range [][]string{plogs.All(user, "forbidden"), logs.All(user, "forbidden")} {
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
