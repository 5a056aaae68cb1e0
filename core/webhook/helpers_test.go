// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package webhook_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"mcr.dev/core/envtest"
	"mcr.dev/core/internal/testcheck"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/clusters"
	"mcr.dev/core/webhook"
)

// testLabel selects a test's namespace in the webhook configurations, so that the tests'
// webhooks, registered in the same members, never see each other's objects.
const testLabel = "mcr.dev/webhook-test"

// admittedIn is the annotation the test defaulter sets to the cluster it was called for.
const admittedIn = "mcr.dev/admitted-in"

// colorPolicy is the validator of the tests: it denies a ConfigMap whose "color" the ConfigMap
// "policy" of the same namespace, in the same cluster, forbids (data "forbidden"), and a
// "probe" ConfigMap always, saying which cluster it saw (and which cluster defaulted it), so
// that a test knows the webhook is in place and routes right.
type colorPolicy struct{}

func (colorPolicy) ValidateCreate(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster, cm *corev1.ConfigMap) (admission.Warnings, error) {
	return check(ctx, name, cl, cm)
}

func (colorPolicy) ValidateUpdate(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster, _, cm *corev1.ConfigMap) (admission.Warnings, error) {
	return check(ctx, name, cl, cm)
}

func (colorPolicy) ValidateDelete(context.Context, multicluster.ClusterName, cluster.Cluster, *corev1.ConfigMap) (admission.Warnings, error) {
	return nil, nil
}

func check(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster, cm *corev1.ConfigMap) (admission.Warnings, error) {
	if cm.Data["probe"] != "" {
		return nil, fmt.Errorf("probe seen by cluster %s, defaulted in %q", name, cm.Annotations[admittedIn])
	}
	if cm.Name == "policy" {
		return nil, nil
	}
	policy := &corev1.ConfigMap{}
	if err := cl.GetClient().Get(ctx, client.ObjectKey{Namespace: cm.Namespace, Name: "policy"}, policy); err != nil {
		if apierrors.IsNotFound(err) {
			return admission.Warnings{"no policy in cluster " + string(name)}, nil
		}
		return nil, fmt.Errorf("reading the policy of cluster %s: %w", name, err)
	}
	if color := cm.Data["color"]; color != "" && color == policy.Data["forbidden"] {
		return nil, fmt.Errorf("color %s is forbidden in cluster %s", color, name)
	}
	return admission.Warnings{"checked in cluster " + string(name)}, nil
}

// clusterStamp is the defaulter of the tests: it annotates objects with their cluster.
type clusterStamp struct{}

func (clusterStamp) Default(_ context.Context, name multicluster.ClusterName, _ cluster.Cluster, cm *corev1.ConfigMap) error {
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations[admittedIn] = string(name)
	return nil
}

// testManager is a manager whose webhook server listens where the fleet's members can call it.
type testManager struct {
	mcmanager.Manager
	endpoint *envtest.WebhookEndpoint
}

// newManager returns a manager hosted in member a, with provider, whose webhook server serves
// on a fresh endpoint.
func newManager(t *testing.T, provider multicluster.Provider) *testManager {
	t.Helper()
	endpoint := envtest.NewWebhookEndpointForTest(t)
	mgr, err := mcmanager.New(fleet.Member("a").Config(), provider, mcmanager.Options{
		WebhookServer:          ctrlwebhook.NewServer(endpoint.ServerOptions()),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Logger:                 logr.Discard(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return &testManager{Manager: mgr, endpoint: endpoint}
}

// start runs the manager until the test ends, and returns once its webhook server answers.
func (m *testManager) start(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	checker := m.GetWebhookServer().StartedChecker()
	testcheck.WaitFor(t, "the webhook server", func() bool { return checker(nil) == nil })
}

// memberProvider returns a provider that engages the given members, each under the cluster
// name it is mapped to.
func memberProvider(t *testing.T, names map[string]multicluster.ClusterName) *clusters.Provider {
	t.Helper()
	p := clusters.New(clusters.Options{Logger: logr.Discard()})
	for member, name := range names {
		if err := p.Add(t.Context(), name, memberCluster(t, member)); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func memberCluster(t *testing.T, member string) cluster.Cluster {
	t.Helper()
	cl, err := cluster.New(fleet.Member(member).Config())
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// warnings collects the warnings the API server returns to a client.
type warnings struct {
	mu   sync.Mutex
	seen []string
}

func (w *warnings) HandleWarningHeaderWithContext(_ context.Context, _ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, text)
}

func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	seen := w.seen
	w.seen = nil
	return seen
}

// member is a direct client of a fleet member, with the warnings it was given.
type member struct {
	name     string
	client   client.Client
	warnings *warnings
}

func directClient(t *testing.T, name string) *member {
	t.Helper()
	m := &member{name: name, warnings: &warnings{}}
	cfg := rest.CopyConfig(fleet.Member(name).Config())
	cfg.WarningHandlerWithContext = m.warnings
	var err error
	if m.client, err = client.New(cfg, client.Options{}); err != nil {
		t.Fatal(err)
	}
	return m
}

// testNamespace creates a namespace of the same random name in each member, labeled for the
// test's webhook configurations, and returns its name.
func testNamespace(t *testing.T, members ...*member) string {
	t.Helper()
	ns := fmt.Sprintf("wh-%d", rand.Uint32())
	for _, m := range members {
		obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{testLabel: ns}}}
		if err := m.client.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
	return ns
}

// createPolicy makes color forbidden in the namespace of member m.
func createPolicy(t *testing.T, m *member, ns, color string) {
	t.Helper()
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "policy"},
		Data:       map[string]string{"forbidden": color},
	}
	if err := m.client.Create(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
}

// configMapRules are the rules of the tests' webhooks: ConfigMaps, created or updated.
func configMapRules() []admissionregistrationv1.RuleWithOperations {
	return []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
		Rule: admissionregistrationv1.Rule{
			APIGroups:   []string{""},
			APIVersions: []string{"v1"},
			Resources:   []string{"configmaps"},
		},
	}}
}

// validating is the ValidatingWebhook entry of the tests for w in namespace ns.
func validating(w *webhook.Webhook, ns string) webhook.ValidatingHook {
	return webhook.ValidatingHook{Webhook: w, ValidatingWebhook: admissionregistrationv1.ValidatingWebhook{
		Name:              "colors.webhook.mcr.dev",
		Rules:             configMapRules(),
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{testLabel: ns}},
		FailurePolicy:     ptr.To(admissionregistrationv1.Fail),
	}}
}

// apply applies cfg in member m for cluster name, and removes it when the test ends.
func apply(t *testing.T, cfg webhook.Configuration, m *member, name multicluster.ClusterName) {
	t.Helper()
	if err := cfg.Apply(t.Context(), name, m.client); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cfg.Remove(context.Background(), name, m.client); err != nil {
			t.Errorf("removing the webhook configuration: %v", err)
		}
	})
}

// createConfigMap creates a ConfigMap with data in member m and returns the API server's error.
func createConfigMap(ctx context.Context, m *member, ns, name string, annotations, data map[string]string) error {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations},
		Data:       data,
	}
	return m.client.Create(ctx, cm)
}

// probeDenial returns the message with which member m's webhook denies a probe, once the API
// server calls the webhook (it takes a moment to see a new configuration). A probe it admits
// before then is deleted again.
func probeDenial(t *testing.T, m *member, ns string, annotations map[string]string) string {
	t.Helper()
	var msg string
	testcheck.WaitFor(t, "member "+m.name+" to call the webhook", func() bool {
		err := createConfigMap(t.Context(), m, ns, "probe", annotations, map[string]string{"probe": "yes"})
		if err == nil {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "probe"}}
			if err := m.client.Delete(t.Context(), cm); err != nil {
				t.Fatal(err)
			}
			return false
		}
		if !strings.Contains(err.Error(), "denied the request") {
			t.Fatalf("probe in %s: %v, want a webhook denial", m.name, err)
		}
		msg = err.Error()
		return true
	})
	return msg
}

// waitForDenial waits until the probe in member m is denied with a message containing want:
// the webhook configuration has just changed, or the webhook's clusters have.
func waitForDenial(t *testing.T, m *member, ns string, want string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		last := probeDenial(t, m, ns, nil)
		if strings.Contains(last, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("member %s denies the probe with %q, want %q", m.name, last, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitForClusters waits until w serves exactly the named clusters.
func waitForClusters(t *testing.T, w *webhook.Webhook, want ...multicluster.ClusterName) {
	t.Helper()
	slices.Sort(want)
	testcheck.WaitFor(t, fmt.Sprintf("the webhook to serve %v", want), func() bool { return slices.Equal(w.Clusters(), want) })
}

// denied reports whether err is a webhook's denial whose message contains want.
func denied(err error, want string) bool {
	var status apierrors.APIStatus
	return errors.As(err, &status) && strings.Contains(err.Error(), "denied the request") && strings.Contains(err.Error(), want)
}
