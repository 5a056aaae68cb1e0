// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package providertest

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/envtest"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
)

// memberPermissionWindow bounds each step of RunMemberPermissionTests, and is the providers'
// CacheSyncTimeout there: long enough for the provider with the whole manifest (its control run
// shows it), short enough to keep the runs that must fail quick.
const memberPermissionWindow = 10 * time.Second

// noStreamingLists names the variant of RunMemberPermissionTests on an apiserver without
// streaming lists.
const noStreamingLists = "no streaming lists"

// MemberPermissionTest is the permission test of a provider whose members are objects of one
// namespace of its host, each with a kubeconfig (a Secret, a Cluster and its Secret, ...): see
// RunMemberPermissionTests.
type MemberPermissionTest struct {
	// Rules are the manifest's rules (see ManifestRules).
	Rules []rbacv1.PolicyRule
	// Namespaced grants the rules in the scenario's namespace (a Role), for a manifest that is a
	// Role; otherwise cluster-wide (a ClusterRole).
	Namespaced bool
	// Host is the apiserver the provider reads, shared with the package's other tests.
	Host *envtest.Member
	// Install, when set, prepares the apiserver without streaming lists as Host was prepared
	// (installs the CRDs of the provider's source of truth, say).
	Install func(ctx context.Context, host *rest.Config) error
	// Scheme is the scheme of the client Add writes with. Default: client-go's.
	Scheme *runtime.Scheme
	// Members are the apiservers the member present at start and the one added later reach,
	// with admin credentials.
	Members [2]*envtest.Member
	// New builds the provider for the members of namespace ns of the host cfg reaches (as the
	// scenario's identity), with kit options o (a short CacheSyncTimeout, the scenario's log).
	New func(cfg *rest.Config, ns string, o kit.Options) (multicluster.ProviderRunnable, error)
	// Add creates with c, in namespace ns, member name with kubeconfig and returns the name the
	// provider engages it under. The provider records the member's Events on the object named
	// name in ns.
	Add func(ctx context.Context, c client.Client, ns, name string, kubeconfig []byte) (multicluster.ClusterName, error)
	// ProcessLogs is where the process-wide loggers (klog's, controller-runtime's) write, where
	// a refused watch is reported. Default: ProcessLogs, where Main sends them.
	ProcessLogs *LogBuffer
}

// RunMemberPermissionTests is RunPermissionTests for a provider whose members are objects of one
// namespace of its host. Each case runs on Host and on an apiserver of its own without streaming
// lists (WatchList off, as apiservers before 1.34 or with the feature disabled, where informers
// list and then watch, so that list is shown needed as well as watch). A case runs the provider,
// in a namespace of its own, as a ServiceAccount "provider" of that namespace with exactly the
// case's rules, and shows what MemberPermissionSteps checks: members "before" and "after"
// engaged, their Events recorded, and a "flaky" member's Event made a series; then that "before"
// answers through its engaged cluster. A Forbidden error logged for the identity, or Start
// failing, counts as a failure too.
func RunMemberPermissionTests(t *testing.T, mt MemberPermissionTest) {
	t.Helper()
	// Namespaces and identities of its own: it runs alongside the other parallel tests.
	t.Parallel()
	legacy := envtest.StartForTestWithOptions(t, envtest.Options{
		Members:        []string{"legacy"},
		APIServerFlags: map[string]string{"feature-gates": "WatchList=false"},
	}).Member("legacy")
	if mt.Install != nil {
		if err := mt.Install(t.Context(), legacy.Config()); err != nil {
			t.Fatalf("preparing the apiserver without streaming lists: %v", err)
		}
	}
	hosts := map[string]*envtest.Member{mt.Host.Name(): mt.Host, noStreamingLists: legacy}
	RunPermissionTests(t, PermissionTest{
		Rules:    mt.Rules,
		Variants: []string{mt.Host.Name(), noStreamingLists},
		Scenario: func(t *testing.T, c PermissionCase, host string) []string {
			return mt.scenario(t, hosts[host], c.Rules)
		},
	})
}

// scenario runs the provider on host as a ServiceAccount with exactly rules and returns what
// failed.
func (mt MemberPermissionTest) scenario(t *testing.T, host *envtest.Member, rules []rbacv1.PolicyRule) []string {
	ctx := t.Context()
	admin := host.ClientForTest(t, client.Options{Scheme: mt.Scheme})
	ns := envtest.NamespaceForTest(t, "rbac", host)
	identity := envtest.ServiceAccountOptions{Namespace: ns, Name: "provider", ClusterRules: rules}
	if mt.Namespaced {
		identity.Rules, identity.ClusterRules = rules, []rbacv1.PolicyRule{}
	}
	logs := &LogBuffer{}
	p, err := mt.New(ServiceAccountConfig(t, host, identity), ns, TestKitOptions(kit.Options{CacheSyncTimeout: memberPermissionWindow}, logs))
	if err != nil {
		t.Fatal(err)
	}
	objects := map[multicluster.ClusterName]string{}
	add := func(name string, kubeconfig []byte) multicluster.ClusterName {
		t.Helper()
		member, err := mt.Add(ctx, admin, ns, name, kubeconfig)
		if err != nil {
			t.Fatalf("adding member %s: %v", name, err)
		}
		objects[member] = name
		return member
	}
	before := add("before", mt.Members[0].Kubeconfig())
	// Start may fail here (a cache that cannot sync), which is one of the failures to show.
	trial := StartTrial(t, p, memberPermissionWindow, time.Minute)
	after := add("after", mt.Members[1].Kubeconfig())
	status := &atomic.Int32{}
	status.Store(http.StatusInternalServerError)
	flaky := add("flaky", FailingMember(t, status))

	MemberPermissionSteps(trial, MemberSteps{
		Before: before, After: after, Flaky: flaky, Status: status,
		Events: func(member multicluster.ClusterName, reason string) int32 {
			return EventCount(ctx, admin, ns, EventTarget{Name: objects[member]}, reason)
		},
	})
	// The member engaged at start reaches its apiserver with its admin credentials.
	if e, _ := trial.Recorder.Latest(before); e.Alive() {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("NamespaceList"))
		if err := e.Cluster.GetAPIReader().List(ctx, list); err != nil {
			trial.Fail(fmt.Sprintf("the member engaged at start cannot list Namespaces: %v", err))
		}
	}
	processLogs := mt.ProcessLogs
	if processLogs == nil {
		processLogs = &ProcessLogs
	}
	trial.FailForbidden(fmt.Sprintf("system:serviceaccount:%s:provider", ns), logs, processLogs)
	return trial.Failures()
}

// RunMemberManifestTest runs the scenario of RunMemberPermissionTests once, on Host, with the
// whole manifest, and fails the test at everything that failed: the manifest a provider's
// documentation points to is enough. RunMemberPermissionTests makes the same check in its
// control run; this test names it for the documentation.
func RunMemberManifestTest(t *testing.T, mt MemberPermissionTest) {
	t.Helper()
	if len(mt.Rules) == 0 {
		t.Fatal("permission test: the manifest has no rules")
	}
	for _, f := range mt.scenario(t, mt.Host, mt.Rules) {
		t.Errorf("with the whole manifest: %s", f)
	}
}
